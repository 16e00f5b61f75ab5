/**
 * npm run bench:knowledge: knowledge search over CHUNKS (default 10,000) chunks, on the embedded
 * database (PGlite) and on PostgreSQL (DATABASE_URL's server, else a throwaway one; BACKENDS=pglite
 * or postgres runs one). A `dialer serve` process gets DOCUMENTS documents through
 * POST /knowledge/documents: pseudo-English text over a vocabulary of 5,000 words drawn with
 * Zipf's law (a few words in most chunks, most words in a few), about 200 words a chunk. Then
 * QUERIES (default 300) questions of 3 to 6 words, mixing common and rare words, are asked through
 * GET /knowledge/search one at a time (the latency a call's `search_knowledge` waits), and beside
 * it the same questions as the same SQL straight on the database (the search's statements alone:
 * the floor), and the cheapest index lookup for each (the first 5 chunks holding its rarest word,
 * unranked). Reported: p50 and p95 of each, and the ratio of the first two.
 * Last line: `knowledge: N chunks: PGlite p95 X ms (floor F ms, index lookup L ms), PostgreSQL ...`.
 * Aim: p95 within 20 ms on PostgreSQL.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openDatabase, type Db } from '../src/db/index.js';
import { KnowledgeService } from '../src/knowledge/index.js';
import { lexemeQuery } from '../src/knowledge/plan.js';
import { selectTermCounts } from '../src/knowledge/repository.js';
import { freePort } from '../test/helpers/net.js';
import { benchPostgres, createDatabase } from './lib/pg.js';
import { percentileOf, serveDialer } from './lib/serve.js';

const CHUNKS = Number(process.env.CHUNKS ?? 10_000);
const QUERIES = Number(process.env.QUERIES ?? 300);
const BACKENDS = (process.env.BACKENDS ?? 'pglite,postgres').split(',');
const WORDS_PER_CHUNK = 200;
const CHUNKS_PER_DOCUMENT = 40;
const DOCUMENTS = Math.ceil(CHUNKS / CHUNKS_PER_DOCUMENT);

const load = () => os.loadavg().map((l) => l.toFixed(2)).join(' ');
const out = (line: string) => process.stdout.write(`${line}\n`);

// A deterministic generator: the same corpus and questions every run.
let seed = 42;
const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
const SYLLABLES = ['ka', 'lo', 'mi', 'ra', 'ten', 'sor', 'vel', 'dun', 'pa', 'shi', 'mor', 'ga', 'lin', 'tre', 'bo', 'fi', 'nal', 'qui', 'zar', 'hep'];
const vocabulary = Array.from({ length: 5000 }, (_, i) => {
  let word = '';
  for (let n = i + 1; n > 0; n = Math.floor(n / SYLLABLES.length)) word += SYLLABLES[n % SYLLABLES.length];
  return word;
});
// Zipf: word k drawn with weight 1/(k+1).
const cumulative: number[] = [];
vocabulary.reduce((sum, _w, k) => (cumulative.push(sum + 1 / (k + 1)), sum + 1 / (k + 1)), 0);
const total = cumulative[cumulative.length - 1]!;
function word(): string {
  const x = random() * total;
  let lo = 0;
  let hi = cumulative.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (cumulative[mid]! < x) lo = mid + 1;
    else hi = mid;
  }
  return vocabulary[lo]!;
}
function paragraph(): string {
  const sentences: string[] = [];
  for (let n = 0; n < WORDS_PER_CHUNK; ) {
    const length = 8 + Math.floor(random() * 10);
    const words = Array.from({ length }, word);
    sentences.push(`${words[0]![0]!.toUpperCase()}${words.join(' ').slice(1)}.`);
    n += length;
  }
  return sentences.join(' ');
}
const documents = Array.from({ length: DOCUMENTS }, (_, d) => ({ title: `Document ${d + 1}`, text: Array.from({ length: CHUNKS_PER_DOCUMENT }, paragraph).join('\n\n') }));
const questions = Array.from({ length: QUERIES }, () => Array.from({ length: 3 + Math.floor(random() * 4) }, word).join(' '));

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dialer-bench-knowledge-'));
const figures: string[] = [];
out(`bench:knowledge: ${DOCUMENTS} documents of ${CHUNKS_PER_DOCUMENT} chunks (~${WORDS_PER_CHUNK} words each), ${QUERIES} questions; ${os.cpus().length} CPUs; load average ${load()}`);

async function measure(label: string, env: { DATABASE_URL: string; DIALER_DATA_DIR: string }, open: () => Promise<Db>): Promise<void> {
  const port = await freePort();
  const dialer = await serveDialer({
    connections: 1,
    env: { ...process.env, ...env, PORT: String(port), DIALER_SANDBOX: 'false', DIALER_ADMIN_EMAIL: 'bench@example.com', DIALER_ADMIN_PASSWORD: 'bench-password', DIALER_JWT_SECRET: 'bench-knowledge-secret-bench-knowledge-01', LOG_LEVEL: 'warn' },
  });
  let reseller: string;
  const api: number[] = [];
  let chunks = 0;
  try {
    const token = (await dialer.call('POST', '/login', { email: 'bench@example.com', password: 'bench-password' })).body.access_token as string;
    const call = async (method: 'GET' | 'POST', p: string, body?: unknown) => {
      const res = await dialer.call(method, p, body, token);
      if (res.status >= 400) throw new Error(`${method} ${p}: ${res.status} ${JSON.stringify(res.body)}`);
      return res.body;
    };
    reseller = (await call('POST', '/resellers', { name: 'Bench' })).id as string;
    const loadStart = performance.now();
    for (const doc of documents) chunks += (await call('POST', '/knowledge/documents', { reseller_id: reseller, title: doc.title, format: 'text', text: doc.text })).chunk_count as number;
    out(`${label}: ${chunks} chunks written in ${((performance.now() - loadStart) / 1000).toFixed(1)} s; load ${load()}`);
    // A first pass warms the caches and plans; the second is measured.
    for (const q of questions.slice(0, 20)) await call('GET', `/knowledge/search?q=${encodeURIComponent(q)}&reseller_id=${reseller}`);
    for (const q of questions) {
      const started = performance.now();
      const body = await call('GET', `/knowledge/search?q=${encodeURIComponent(q)}&reseller_id=${reseller}`);
      api.push(performance.now() - started);
      if (!Array.isArray(body.data)) throw new Error(`search: ${JSON.stringify(body)}`);
    }
  } finally {
    await dialer.stop();
  }
  // The floor: the search's statements alone, straight on the same database; and under it the
  // cheapest index lookup for each question: the first 5 chunks holding its rarest word, unranked.
  const db = await open();
  const floor: number[] = [];
  const lookup: number[] = [];
  const knowledge = new KnowledgeService(db);
  try {
    for (const q of questions.slice(0, 20)) await knowledge.findChunks(reseller, undefined, q, 5);
    for (const q of questions) {
      const started = performance.now();
      await knowledge.findChunks(reseller, undefined, q, 5);
      floor.push(performance.now() - started);
    }
    const rarest = [];
    for (const q of questions) {
      const held = (await selectTermCounts(db, reseller, q)).terms.filter((t) => t.chunks > 0).sort((a, b) => a.chunks - b.chunks);
      if (held[0]) rarest.push(lexemeQuery(held[0].lexeme));
    }
    const lookupSql = 'SELECT c.document_id, c.position, c.content FROM knowledge_chunks c WHERE c.search @@ $1::tsquery AND c.reseller_id = $2 LIMIT 5';
    for (const term of rarest.slice(0, 20)) await db.query(lookupSql, [term, reseller]);
    for (const term of rarest) {
      const started = performance.now();
      await db.query(lookupSql, [term, reseller]);
      lookup.push(performance.now() - started);
    }
  } finally {
    await db.close();
  }
  const ms = (values: number[], p: number) => percentileOf(values, p).toFixed(1);
  out(
    `${label}: API p50 ${ms(api, 50)} ms, p95 ${ms(api, 95)} ms; the statements alone p50 ${ms(floor, 50)} ms, p95 ${ms(floor, 95)} ms; ` +
      `ratio at p95 ${(percentileOf(api, 95) / percentileOf(floor, 95)).toFixed(2)}; the rarest word's index lookup p50 ${ms(lookup, 50)} ms, p95 ${ms(lookup, 95)} ms; load ${load()}`,
  );
  figures.push(`${label} p95 ${ms(api, 95)} ms (floor ${ms(floor, 95)} ms, index lookup ${ms(lookup, 95)} ms)`);
}

try {
  if (BACKENDS.includes('pglite')) {
    const dataDir = path.join(dir, 'pglite');
    fs.mkdirSync(dataDir);
    await measure('PGlite', { DATABASE_URL: '', DIALER_DATA_DIR: dataDir }, () => openDatabase({ databaseUrl: undefined, dataDir }));
  }
  if (BACKENDS.includes('postgres')) {
    const server = await benchPostgres();
    const database = await createDatabase(server.url, `dialer_bench_knowledge_${process.pid}`);
    try {
      await measure(`PostgreSQL (${server.label})`, { DATABASE_URL: database.url, DIALER_DATA_DIR: path.join(dir, 'pg-data') }, () => openDatabase({ databaseUrl: database.url, dataDir: dir }));
    } finally {
      await database.drop();
      await server.stop();
    }
  }
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
}
out(`knowledge: ${CHUNKS} chunks: ${figures.join(', ')}`);
