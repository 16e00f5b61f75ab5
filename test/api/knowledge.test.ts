/**
 * The knowledge base: documents chunked and indexed on create, found by full-text search within
 * the caller's reseller (and template), refused with 4xx for bad input; and the built-in
 * search_knowledge answering inside a conversation driven by the local OpenAI-compatible server.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { KnowledgeService } from '../../src/knowledge/index.js';
import { OpenAICompatibleLLM } from '../../src/providers/llm/openai.js';
import { createFlowSession, type AgentAction } from '../../src/voice/flow/index.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { startOpenAIServer, type OpenAIServer } from '../helpers/openai-server.js';
import { buildWorld, type World } from '../helpers/world.js';

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
  it('reads a page under the outbound policy into a document (title, text without its scripts and navigation, source_url); a PDF, a missing page, a refused address and text with a url are 4xx and store nothing', async () => {
    const pages: Record<string, { type: string; body: string; status?: number }> = {
      '/returns.html': {
        type: 'text/html; charset=utf-8',
        body: '<html><head><title>Returns &amp; refunds</title><script>var tracking = "scriptword";</script><style>p{color:red}</style></head><body><nav>Home | Shop | navword</nav><h1>Returns</h1><p>A quillbrook kettle may be returned within <a href="/terms">forty days</a>.</p><footer>footword</footer></body></html>',
      },
      '/manual.pdf': { type: 'application/pdf', body: '%PDF-1.4 ...' },
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

      const before = (await w.reseller1.get('/knowledge/documents')).body.total;
      const refused: Array<[Record<string, unknown>, number, string]> = [
        [{ url: `${base}/manual.pdf` }, 415, 'unsupported_document'],
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
});
