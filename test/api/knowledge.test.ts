/**
 * The knowledge base: documents chunked and indexed on create, found by full-text search within
 * the caller's reseller (and template), refused with 4xx for bad input; and the built-in
 * search_knowledge answering inside a conversation driven by the local OpenAI-compatible server.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import fs from 'node:fs';
import { createKnowledgeService, EmbeddingsError, KnowledgeService, OpenAIEmbeddings } from '../../src/knowledge/index.js';
import { strictOutbound } from '../../src/lib/outbound/index.js';
import type { SearchKnowledge } from '../../src/voice/services.js';
import { WARRANTY_PDF_TITLE } from '../fixtures/warranty-pdf.js';
import { OpenAICompatibleLLM } from '../../src/providers/llm/openai.js';
import { createFlowSession, type AgentAction } from '../../src/voice/flow/index.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { startOpenAIServer, type OpenAIServer } from '../helpers/openai-server.js';
import { buildWorld, type World } from '../helpers/world.js';

const pdfBytes = fs.readFileSync(new URL('../fixtures/warranty.pdf', import.meta.url));
const pngBytes = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex');

let t: TestApp;
let w: World;
let llmServer: OpenAIServer;
before(async () => {
  t = await buildTestApp();
  w = await buildWorld(t);
  llmServer = await startOpenAIServer();
});
after(async () => {
  await llmServer.close();
  await t.close();
});

let seq = 0;
const flow = {
  initial_node: 'help',
  nodes: [{ node_name: 'help', respond_immediately: false, task_messages: [{ role: 'system', content: 'Answer questions about the shop.' }], functions: [{ name: 'search_knowledge', type: 'builtin' }] }],
};
const template = async (resellerId: string) => (await t.admin.post('/templates', { name: `kb-tpl-${++seq}`, reseller_id: resellerId, merchant_id: null, flow })).body.id as string;

// Filler paragraphs about other things, so the document is cut into several chunks.
const filler = (topic: string) => Array.from({ length: 6 }, (_, i) => `${topic} paragraph ${i}: ` + 'our shop opens early and closes late every weekday '.repeat(8)).join('\n\n');
const manual = ['# Store guide', filler('Hours'), '## Batteries', 'The zanzibarite battery pack carries a seven year warranty, replaced free at any branch.', filler('Parking')].join('\n\n');

describe('knowledge documents', () => {
  it('creates a document, chunks it, finds the chunk whose words only it holds, lists, gets and deletes it', async () => {
    const created = await w.reseller1.post('/knowledge/documents', { title: 'Store guide', format: 'markdown', text: manual });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.equal(created.body.reseller_id, w.r1);
    assert.ok(created.body.chunk_count >= 3, `chunks: ${created.body.chunk_count}`);
    const id = created.body.id as string;

    const found = await w.reseller1.get(`/knowledge/search?q=${encodeURIComponent('How long is the zanzibarite warranty?')}`);
    assert.equal(found.status, 200, JSON.stringify(found.body));
    assert.equal(found.body.data[0].document_id, id);
    assert.match(found.body.data[0].text, /seven year warranty/);
    assert.ok(found.body.data[0].rank > 0);
    // A merchant of the reseller searches it too.
    assert.equal((await w.merchant1.get('/knowledge/search?q=zanzibarite')).body.data[0].document_id, id);

    assert.ok((await w.reseller1.get('/knowledge/documents')).body.data.some((d: { id: string }) => d.id === id));
    assert.equal((await w.reseller1.get(`/knowledge/documents/${id}`)).body.text, manual.trim());

    // Another reseller neither sees, finds nor deletes it.
    assert.equal((await w.reseller2.get(`/knowledge/documents/${id}`)).status, 404);
    assert.deepEqual((await w.reseller2.get('/knowledge/search?q=zanzibarite')).body.data, []);
    assert.ok(!(await w.reseller2.get('/knowledge/documents')).body.data.some((d: { id: string }) => d.id === id));
    assert.equal((await w.reseller2.delete(`/knowledge/documents/${id}`)).status, 404);
    assert.equal((await w.merchant1.delete(`/knowledge/documents/${id}`)).status, 403);

    assert.deepEqual((await w.reseller1.delete(`/knowledge/documents/${id}`)).body, { id, deleted: true });
    assert.deepEqual((await w.reseller1.get('/knowledge/search?q=zanzibarite')).body.data, []);
  });

  it('answers 4xx for bad input: empty text, too long a document, an unknown or foreign template, another reseller, a blank search', async () => {
    const foreignTemplate = await template(w.r2);
    const cases: Array<[Record<string, unknown>, number, string]> = [
      [{ title: 'Empty', text: '   \n ' }, 400, '/text'],
      [{ title: 'Nothing', text: '' }, 400, '/text'],
      [{ title: 'Huge', text: 'word '.repeat(40_001) }, 400, '/text'],
      [{ title: 'Lost', text: 'Some text.', template_id: 'no-such-template' }, 400, '/template_id'],
      [{ title: 'Theirs', text: 'Some text.', template_id: foreignTemplate }, 400, '/template_id'],
      [{ title: 'Odd', text: 'Some text.', format: 'pdf' }, 400, '/format'],
      [{ title: 'Other', text: 'Some text.', reseller_id: w.r2 }, 403, ''],
    ];
    for (const [body, status, path] of cases) {
      const res = await w.reseller1.post('/knowledge/documents', body);
      assert.equal(res.status, status, `${JSON.stringify(body).slice(0, 80)}: ${JSON.stringify(res.body)}`);
      if (path) assert.ok(JSON.stringify(res.body.errors ?? []).includes(path), `${JSON.stringify(body).slice(0, 80)}: ${JSON.stringify(res.body)}`);
    }
    assert.equal((await w.reseller1.get('/knowledge/search?q=%20%20')).status, 400);
    assert.equal((await w.reseller1.get('/knowledge/search')).status, 400);
    assert.equal((await w.reseller1.get(`/knowledge/search?q=x&template_id=${foreignTemplate}`)).status, 400);
    // Nothing was half-written.
    assert.deepEqual((await w.reseller1.get('/knowledge/documents')).body.data.filter((d: { title: string }) => ['Empty', 'Huge', 'Lost', 'Theirs'].includes(d.title)), []);
  });

  it('a question mixing common and rare words finds the chunk holding the rare ones first, however often the others hold the common ones', async () => {
    // Reseller 2's only document: five chunks full of the common words, one holding the rare ones.
    const common = (i: number) => `Parcel note ${i}. ` + 'Every parcel goes by van and every parcel van is tracked, parcel by parcel. '.repeat(11);
    const rare = 'The glimmerstone comes from Oslo by van. ' + 'Our staff answer the telephone on weekdays from nine. '.repeat(17);
    const text = [common(1), common(2), rare, common(3), common(4), common(5)].join('\n\n');
    const doc = await w.reseller2.post('/knowledge/documents', { title: 'Shipping', text });
    assert.equal(doc.body.chunk_count, 6, JSON.stringify(doc.body));
    const found = (await w.reseller2.get(`/knowledge/search?q=${encodeURIComponent('Which parcel van brings the glimmerstone from Oslo?')}`)).body.data;
    assert.equal(found[0].position, 2, JSON.stringify(found.map((c: { position: number; rank: number }) => [c.position, c.rank])));
    assert.ok(found.length > 1, 'the chunks holding only the common words follow');

    // When even the question's rarest word is too common to fetch every chunk holding it, the
    // chunks holding all its words are fetched besides: here a budget of one chunk.
    const narrow = await new KnowledgeService(t.db, { candidateBudget: 1 }).findChunks(w.r2, undefined, 'tracked parcel van', 5);
    assert.ok(narrow.length >= 1 && narrow.length <= 2, `${narrow.length} chunks`);
    for (const c of narrow) for (const word of [/tracked/, /parcel/, /van/]) assert.match(c.text, word);
  });

  it("a template's calls search its own documents and the reseller-wide ones, not another template's", async () => {
    const [a, b] = [await template(w.r1), await template(w.r1)];
    const shared = (await w.reseller1.post('/knowledge/documents', { title: 'Delivery', text: 'Quoxel deliveries arrive within two days.' })).body.id;
    const forA = (await w.reseller1.post('/knowledge/documents', { title: 'Plan A', text: 'The quoxel gold plan costs nine euros.', template_id: a })).body.id;
    const forB = (await w.reseller1.post('/knowledge/documents', { title: 'Plan B', text: 'The quoxel silver plan costs four euros.', template_id: b })).body.id;
    const ids = async (templateId: string) => (await w.reseller1.get(`/knowledge/search?q=quoxel&template_id=${templateId}`)).body.data.map((c: { document_id: string }) => c.document_id).sort();
    assert.deepEqual(await ids(a), [shared, forA].sort());
    assert.deepEqual(await ids(b), [shared, forB].sort());
  });
});

describe('knowledge read from a web page', () => {
  it('reads a page or a PDF under the outbound policy into a document (title, text without its scripts and navigation, source_url); a broken PDF, an image, a missing page, a refused address and text with a url are 4xx and store nothing', async () => {
    const pages: Record<string, { type: string; body: string | Buffer; status?: number }> = {
      '/returns.html': {
        type: 'text/html; charset=utf-8',
        body: '<html><head><title>Returns &amp; refunds</title><script>var tracking = "scriptword";</script><style>p{color:red}</style></head><body><nav>Home | Shop | navword</nav><h1>Returns</h1><p>A quillbrook kettle may be returned within <a href="/terms">forty days</a>.</p><footer>footword</footer></body></html>',
      },
      '/manual.pdf': { type: 'application/pdf', body: pdfBytes },
      '/broken.pdf': { type: 'application/pdf', body: '%PDF-1.4\n1 0 obj\n<< /Type /Catalog' },
      '/logo.png': { type: 'image/png', body: pngBytes },
      '/gone': { type: 'text/plain', body: 'gone', status: 404 },
    };
    const site = http.createServer((req, res) => {
      const page = pages[req.url ?? ''];
      if (!page) return void res.writeHead(404).end();
      res.writeHead(page.status ?? 200, { 'content-type': page.type }).end(page.body);
    });
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
    try {
      const created = await w.reseller1.post('/knowledge/documents', { url: `${base}/returns.html` });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      assert.equal(created.body.title, 'Returns & refunds');
      assert.equal(created.body.source_url, `${base}/returns.html`);
      assert.equal(created.body.format, 'text');
      assert.match(created.body.text, /A quillbrook kettle may be returned within forty days\./);
      for (const word of ['scriptword', 'navword', 'footword', 'color:red', '/terms']) assert.ok(!created.body.text.includes(word), `${word} kept: ${created.body.text}`);
      const found = await w.reseller1.get(`/knowledge/search?q=${encodeURIComponent('Can I return my quillbrook kettle?')}`);
      assert.equal(found.body.data[0]?.document_id, created.body.id, JSON.stringify(found.body));
      assert.equal((await w.reseller1.get(`/knowledge/documents/${created.body.id}`)).body.source_url, `${base}/returns.html`);

      // A PDF at a URL is read as an uploaded one.
      const pdf = await w.reseller1.post('/knowledge/documents', { url: `${base}/manual.pdf` });
      assert.equal(pdf.status, 201, JSON.stringify(pdf.body));
      assert.equal(pdf.body.title, WARRANTY_PDF_TITLE);
      assert.equal(pdf.body.source_url, `${base}/manual.pdf`);
      assert.match(pdf.body.text, /guaranteed for seven years/);
      assert.equal((await w.reseller1.delete(`/knowledge/documents/${pdf.body.id}`)).status, 200);

      const before = (await w.reseller1.get('/knowledge/documents')).body.total;
      const refused: Array<[Record<string, unknown>, number, string]> = [
        [{ url: `${base}/broken.pdf` }, 422, 'unreadable_document'],
        [{ url: `${base}/logo.png` }, 415, 'unsupported_document'],
        [{ url: `${base}/gone` }, 422, 'page_unreachable'],
        [{ url: 'http://169.254.169.254/latest/meta-data/' }, 400, 'url_refused'],
        [{ url: 'ftp://example.com/a.txt' }, 400, 'url_refused'],
        [{ url: `${base}/returns.html`, text: 'both', title: 'Both' }, 400, 'invalid_document'],
        [{ title: 'Neither' }, 400, 'invalid_document'],
      ];
      for (const [body, status, code] of refused) {
        const res = await w.reseller1.post('/knowledge/documents', body);
        assert.equal(res.status, status, `${JSON.stringify(body)}: ${JSON.stringify(res.body)}`);
        assert.equal(res.body.code, code, JSON.stringify(res.body));
      }
      assert.equal((await w.reseller1.get('/knowledge/documents')).body.total, before);
      assert.equal((await w.reseller1.delete(`/knowledge/documents/${created.body.id}`)).status, 200);
    } finally {
      await new Promise<void>((resolve) => site.close(() => resolve()));
    }
  });
});

describe('knowledge from an uploaded file', () => {
  it('reads an uploaded PDF (its title, its text found by search); a file that is neither text nor PDF is a 415, a broken PDF a 422, bad base64 or a file with text a 400, and nothing is stored', async () => {
    const created = await w.reseller1.post('/knowledge/documents', { file: pdfBytes.toString('base64'), file_name: 'warranty.pdf' });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.equal(created.body.title, WARRANTY_PDF_TITLE);
    assert.equal(created.body.source_url, null);
    assert.match(created.body.text, /^Quarzel Lamp Warranty\nThe Quarzel lamp is guaranteed for seven years/);
    const found = (await w.reseller1.get(`/knowledge/search?q=${encodeURIComponent('How many years is the Quarzel lamp guaranteed?')}`)).body.data;
    assert.equal(found[0]?.document_id, created.body.id, JSON.stringify(found));
    // A Markdown file is its text; its name is the title.
    const notes = await w.reseller1.post('/knowledge/documents', { file: Buffer.from('# Opening\n\nThe wexford branch opens at nine.').toString('base64'), file_name: 'branch-notes.md' });
    assert.equal(notes.status, 201, JSON.stringify(notes.body));
    assert.deepEqual([notes.body.title, notes.body.format], ['branch-notes', 'markdown']);

    const before = (await w.reseller1.get('/knowledge/documents')).body.total;
    const refused: Array<[Record<string, unknown>, number, string]> = [
      [{ file: pngBytes.toString('base64'), file_name: 'logo.png' }, 415, 'unsupported_document'],
      [{ file: Buffer.from('%PDF-1.7\n%\xe2\xe3\n1 0 obj << /Type /Catalog').toString('base64'), file_name: 'cut.pdf' }, 422, 'unreadable_document'],
      [{ file: 'this is not base64!', file_name: 'a.pdf' }, 400, 'invalid_document'],
      [{ file: pdfBytes.toString('base64'), text: 'both', title: 'Both' }, 400, 'invalid_document'],
    ];
    for (const [body, status, code] of refused) {
      const res = await w.reseller1.post('/knowledge/documents', body);
      assert.equal(res.status, status, `${JSON.stringify(body).slice(0, 80)}: ${JSON.stringify(res.body)}`);
      assert.equal(res.body.code, code, JSON.stringify(res.body));
      assert.ok(JSON.stringify(res.body.errors ?? []).includes('/file'), JSON.stringify(res.body));
    }
    assert.equal((await w.reseller1.get('/knowledge/documents')).body.total, before);
    for (const id of [created.body.id, notes.body.id]) assert.equal((await w.reseller1.delete(`/knowledge/documents/${id}`)).status, 200);
  });
});

describe('search_knowledge in a conversation', () => {
  it('the LLM (the local OpenAI-compatible server) calls it, gets the passage only the document holds, and the call record cites it', async () => {
    const tpl = await template(w.r1);
    const doc = (await w.reseller1.post('/knowledge/documents', { title: 'Returns', text: 'Returns of a flumbrat lamp are accepted within 45 days with the receipt.', template_id: tpl })).body.id;
    llmServer.chat.push({ tools: [{ name: 'search_knowledge', arguments: { query: 'flumbrat lamp returns' } }] }, { text: 'You can return it within 45 days with the receipt.' });
    const knowledge = new KnowledgeService(t.db);
    const llm = new OpenAICompatibleLLM({ baseUrl: llmServer.url, apiKey: 'sk-test', model: 'local', timeoutMs: 5000 });
    const session = createFlowSession(flow as never, { llm, variables: {}, searchKnowledge: (q) => knowledge.searchForTemplate(tpl, q) });
    const actions: AgentAction[] = [];
    for await (const a of session.start(new AbortController().signal)) actions.push(a);
    for await (const a of session.userTurn('Can I return my flumbrat lamp?', new AbortController().signal)) actions.push(a);

    // The tool was offered, and its result went back to the LLM holding the passage.
    const requests = llmServer.chatRequests.slice(-2);
    assert.ok(requests[0]!.body.tools.some((tool: { function: { name: string } }) => tool.function.name === 'search_knowledge'));
    const toolMessage = requests[1]!.body.messages.at(-1);
    assert.equal(toolMessage.role, 'tool');
    assert.match(toolMessage.content, /within 45 days with the receipt/);
    assert.match(actions.filter((a) => a.type === 'say').map((a) => (a as { text: string }).text).join(''), /45 days/);
    assert.equal(session.record.knowledge.length, 1);
    assert.equal(session.record.knowledge[0]!.query, 'flumbrat lamp returns');
    assert.deepEqual(session.record.knowledge[0]!.chunks.map((c) => [c.document_id, c.title, c.position]), [[doc, 'Returns', 0]]);
    assert.deepEqual(session.record.errors, []);
  });

  it('answers from an uploaded PDF alone: by its words with full-text search, and a paraphrase sharing none of them by meaning, with embeddings and pgvector', async () => {
    const { rows } = await t.db.query<{ extversion: string }>("SELECT extversion FROM pg_extension WHERE extname = 'vector'");
    assert.equal(rows.length, 1, `pgvector is not in this ${t.db.kind === 'pglite' ? 'PGlite' : 'PostgreSQL'}: install it for the server's major version (Debian: apt-get install postgresql-<major>-pgvector; npm test installs it when run as root)`);
    // The knowledge base as the app builds it with an embeddings endpoint: the local server's model.
    const settings = { embeddings: { url: llmServer.url, model: 'local-embed', apiKey: undefined } };
    const admin = { kind: 'user', id: 'test-admin', label: 'test', role: 'admin', resellerId: null, merchantId: null } as const;
    const byBoth = createKnowledgeService(t.db, { fetch: t.outbound.fetch, settings, log: { warn: (o: unknown) => assert.fail(`warned: ${JSON.stringify(o)}`) } });
    const byWords = new KnowledgeService(t.db);
    const tpl = await template(w.r1);
    const pdf = await byBoth.create(admin, { file: pdfBytes.toString('base64'), file_name: 'warranty.pdf', template_id: tpl });
    assert.ok(llmServer.embeddingRequests.some((r) => r.model === 'local-embed' && r.input.some((i) => /Quarzel lamp is guaranteed/.test(i))), 'the chunk was embedded');

    // Full-text search: the question holds the document's words.
    const words = await converse((q) => byWords.searchForTemplate(tpl, q), 'Quarzel lamp guarantee years');
    assert.match(words.toolResult, /guaranteed for seven years/);
    assert.deepEqual(words.cited, [[pdf.id, WARRANTY_PDF_TITLE, 0]]);

    // A paraphrase: no word of it is in the document, so full text finds nothing of it; its meaning does.
    const paraphrase = 'How long will my light be covered?';
    assert.ok(!(await byWords.searchForTemplate(tpl, paraphrase)).some((c) => c.document_id === pdf.id));
    const meaning = await converse((q) => byBoth.searchForTemplate(tpl, q), paraphrase);
    assert.match(meaning.toolResult, /guaranteed for seven years/);
    assert.deepEqual(meaning.cited[0], [pdf.id, WARRANTY_PDF_TITLE, 0]);

    // The endpoint failing: a document is still stored and found by its words; a question still answered by them.
    llmServer.embeddingsFailWith = 503;
    const warned: unknown[] = [];
    const failing = createKnowledgeService(t.db, { fetch: t.outbound.fetch, settings, log: { warn: (o: unknown) => void warned.push(o) } });
    try {
      const kept = await failing.create(admin, { reseller_id: w.r1, title: 'Depot', text: 'The Vellmar depot opens at eight.', template_id: tpl });
      assert.equal((await failing.searchForTemplate(tpl, 'When does the Vellmar depot open?'))[0]?.document_id, kept.id);
      assert.equal(warned.length, 2, JSON.stringify(warned));
    } finally {
      llmServer.embeddingsFailWith = undefined;
    }
    // The endpoint's address goes through the outbound policy: one it refuses is never asked.
    const refused = new OpenAIEmbeddings({ url: llmServer.url, model: 'local-embed', apiKey: undefined }, strictOutbound().fetch);
    await assert.rejects(refused.embed(['anything']), (err: Error) => err instanceof EmbeddingsError && /not allowed|blocked|refused/i.test(err.message));
  });
});

/** One turn of a conversation whose LLM calls search_knowledge with `query`: what the tool answered, and the chunks the call record cites. */
async function converse(searchKnowledge: SearchKnowledge, query: string): Promise<{ toolResult: string; cited: Array<[string, string, number]> }> {
  llmServer.chat.push({ tools: [{ name: 'search_knowledge', arguments: { query } }] }, { text: 'It is guaranteed for seven years.' });
  const llm = new OpenAICompatibleLLM({ baseUrl: llmServer.url, apiKey: 'sk-test', model: 'local', timeoutMs: 5000 });
  const session = createFlowSession(flow as never, { llm, variables: {}, searchKnowledge });
  for await (const _ of session.start(new AbortController().signal));
  const said: string[] = [];
  for await (const a of session.userTurn('How long is my lamp guaranteed?', new AbortController().signal)) if (a.type === 'say') said.push(a.text);
  assert.match(said.join(''), /seven years/);
  assert.deepEqual(session.record.errors, []);
  const toolMessage = llmServer.chatRequests.at(-1)!.body.messages.at(-1);
  assert.equal(toolMessage.role, 'tool');
  return { toolResult: String(toolMessage.content), cited: session.record.knowledge.at(-1)!.chunks.map((c) => [c.document_id, c.title, c.position]) };
}
