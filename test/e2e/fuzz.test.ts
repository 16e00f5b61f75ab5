/**
 * Black-box fuzzing of every endpoint of a running `npm start` (dialer serve, over real HTTP):
 * each operation of the OpenAPI document plus the hidden routes (provider callbacks, playground,
 * flag webhook), with malformed JSON, wrong content types, huge and deeply nested bodies, every
 * field of a valid body replaced by wrong types and unicode edge cases (NUL, lone surrogates,
 * right-to-left marks, emoji, 100k-character text), traversal and over-long ids in paths, and odd
 * queries, as an admin, a reseller's s2s token, a user's token, a forged token and nobody. Not one
 * answer may be a 5xx, and every error must be a problem. Prints the count of requests and of
 * each status.
 *
 * Against a server started by hand (`npm start`, any settings) instead of its own child process:
 *   DIALER_FUZZ_URL=http://127.0.0.1:8080 DIALER_FUZZ_ADMIN_EMAIL=… DIALER_FUZZ_ADMIN_PASSWORD=… \
 *     npm test -- test/e2e/fuzz.test.ts
 * (its request limits may then answer 429 problems, which count as answers like any other 4xx).
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { after, before, it } from 'node:test';
import { API_PREFIX } from '../../src/app.js';
import { createPgDatabase, migratedDataDir, testBackend } from '../helpers/db.js';
import { freePort } from '../helpers/net.js';

interface Answer {
  status: number;
  type: string;
  body: string;
}

let service: ChildProcess | undefined;
let base: string;
let dataDir: string | undefined;
const external = process.env.DIALER_FUZZ_URL?.trim();
const adminEmail = external ? (process.env.DIALER_FUZZ_ADMIN_EMAIL ?? '') : 'fuzz@example.com';
const adminPassword = external ? (process.env.DIALER_FUZZ_ADMIN_PASSWORD ?? '') : 'fuzz-password-1';
const statuses = new Map<number, number>();
let dropDb: (() => Promise<void>) | undefined;
let logs = '';
let requests = 0;
const failures: string[] = [];

/** One raw HTTP request: the path goes on the wire as written (no URL normalisation). */
async function send(method: string, rawPath: string, headers: Record<string, string> = {}, body?: string | Buffer): Promise<Answer> {
  requests++;
  // A server may refuse a body larger than its limit before reading it (413 and close): the
  // client's write then meets EPIPE/ECONNRESET before the answer is read. Ask again: a few tries
  // see the answer; a server that never answers still fails.
  for (let attempt = 1; ; attempt++) {
    const answer = await once(method, rawPath, headers, body);
    const cutShort = answer.status === 0 && /EPIPE|ECONNRESET/.test(answer.body);
    if (!cutShort || body === undefined || Buffer.byteLength(body) < 64 * 1024 || attempt === 5) return answer;
  }
}

function once(method: string, rawPath: string, headers: Record<string, string>, body?: string | Buffer): Promise<Answer> {
  return new Promise((resolve) => {
    const url = new URL(base);
    const req = http.request({ host: url.hostname, port: url.port, method, path: rawPath, headers: { ...headers, ...(body !== undefined ? { 'content-length': String(Buffer.byteLength(body)) } : {}) } }, (res) => {
      // A live event stream never ends: its answer is its status and type.
      if (String(res.headers['content-type'] ?? '').startsWith('text/event-stream')) {
        resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type']), body: '' });
        res.destroy();
        return;
      }
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type'] ?? ''), body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', () => resolve({ status: 0, type: '', body: 'response error' }));
    });
    req.on('error', (err) => resolve({ status: 0, type: '', body: `request error: ${err.message}` }));
    if (body !== undefined) req.write(body);
    req.end();
  });
}

/** Requests to send, a few at a time (each is independent of the others). */
const tasks: Array<{ label: string; run: () => Promise<Answer> }> = [];
const IN_FLIGHT = 4;

function task(label: string, run: () => Promise<Answer>): void {
  tasks.push({ label, run });
}

async function drain(): Promise<void> {
  const worker = async () => {
    for (let next = tasks.shift(); next; next = tasks.shift()) check(next.label, await next.run());
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
}

function check(label: string, answer: Answer): void {
  statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
  if (answer.status >= 500 || answer.status === 0) failures.push(`${label} -> ${answer.status} ${answer.body.slice(0, 300)}`);
  else if (answer.status >= 400 && !answer.type.startsWith('application/problem+json')) failures.push(`${label} -> ${answer.status} not a problem (${answer.type})`);
}

async function json(method: string, p: string, token: string | undefined, body?: unknown): Promise<any> {
  const res = await send(method, `${API_PREFIX}${p}`, { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) }, body === undefined ? undefined : JSON.stringify(body));
  return { status: res.status, body: res.body ? JSON.parse(res.body) : undefined };
}

before(async () => {
  if (external) {
    base = external.replace(/\/+$/, '');
    assert.equal((await send('GET', `${API_PREFIX}/health`)).status, 200, `no Dialer answers at ${base}`);
    return;
  }
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'dialer-fuzz-'));
  let databaseUrl = '';
  if (testBackend() === 'postgres') {
    const created = await createPgDatabase();
    databaseUrl = created.url;
    dropDb = created.drop;
  } else {
    // The migrated database is in the data directory already: the fuzz is about answers, not a first start.
    await migratedDataDir(dataDir);
  }
  service = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'serve'], {
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATABASE_URL: databaseUrl,
      DIALER_DATA_DIR: dataDir,
      DIALER_ADMIN_EMAIL: adminEmail,
      DIALER_ADMIN_PASSWORD: adminPassword,
      DIALER_METRICS_TOKEN: 'fuzz-metrics-token-0123',
      DIALER_FLAGS_WEBHOOK_SECRET: 'fuzz-flags-secret-0123',
      // The limits would answer 429 before the handlers are reached: the fuzz wants the handlers.
      DIALER_RATE_LIMIT: '0',
      DIALER_RATE_LIMIT_ANONYMOUS: '0',
      DIALER_RATE_LIMIT_LOGIN: '0',
      DIALER_RATE_LIMIT_TOKEN_ISSUE: '0',
      DIALER_LOGIN_MAX_FAILURES: '1000',
      DIALER_LOGIN_MAX_FAILURES_PER_ADDRESS: '100000',
      LOG_LEVEL: 'warn',
    },
    cwd: path.resolve(import.meta.dirname, '../..'),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const child = service;
  child.stdout!.on('data', (d) => (logs += d));
  child.stderr!.on('data', (d) => (logs += d));
  const deadline = Date.now() + 300_000;
  while ((await send('GET', `${API_PREFIX}/health`)).status !== 200) {
    assert.ok(Date.now() < deadline && child.exitCode === null, `the service did not start: ${logs}`);
    await new Promise((r) => setTimeout(r, 200));
  }
});

after(async () => {
  const child = service;
  if (child && child.exitCode === null) {
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await exited;
  }
  await dropDb?.();
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
});

// Values that replace a field: wrong types, edge numbers, unicode edge cases, traversal, injection.
const BAD_VALUES: Array<[string, string]> = [
  ['null', 'null'],
  ['number', '123'],
  ['negative', '-1'],
  ['huge number', '1e308'],
  ['float', '0.5'],
  ['boolean', 'true'],
  ['array', '[1,"a",null]'],
  ['object', '{"a":{"b":[]}}'],
  ['empty text', '""'],
  ['NUL', '"a\\u0000b"'],
  ['lone high surrogate', '"x\\ud800y"'],
  ['lone low surrogate', '"\\udfffx"'],
  ['RTL override and zero-width', '"\\u202e\\u200b\\ufeff abc"'],
  ['emoji and flags', '"💥🇺🇳👩‍👩‍👧"'],
  ['non-character', '"\\uffff\\ufffe"'],
  ['long text', JSON.stringify('x'.repeat(100_000))],
  ['traversal', '"../../../etc/passwd"'],
  ['sql', `"' OR '1'='1; DROP TABLE leads; --"`],
  ['url', '"http://169.254.169.254/latest/meta-data/"'],
  ['date-ish', '"2024-13-45T99:99:99Z"'],
];

const MALFORMED_BODIES: Array<[string, string | Buffer, string]> = [
  ['truncated JSON', '{"a":', 'application/json'],
  ['not JSON', 'hello', 'application/json'],
  ['empty', '', 'application/json'],
  ['JSON null', 'null', 'application/json'],
  ['JSON array', '[]', 'application/json'],
  ['JSON string', '"x"', 'application/json'],
  ['JSON number', '1e999', 'application/json'],
  ['deep nesting', '['.repeat(20_000) + ']'.repeat(20_000), 'application/json'],
  ['deep objects', '{"a":'.repeat(5_000) + '1' + '}'.repeat(5_000), 'application/json'],
  ['proto pollution', '{"__proto__":{"admin":true},"constructor":{"prototype":{"x":1}}}', 'application/json'],
  ['duplicate keys', '{"a":1,"a":2}', 'application/json'],
  ['huge body', JSON.stringify({ pad: 'x'.repeat(2 * 1024 * 1024) }), 'application/json'],
  ['invalid UTF-8', Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]), 'application/json'],
  ['text/plain', '{"a":1}', 'text/plain'],
  ['form', 'a=1&b=2', 'application/x-www-form-urlencoded'],
  ['multipart', '--x\r\nContent-Disposition: form-data; name="a"\r\n\r\n1\r\n--x--', 'multipart/form-data; boundary=x'],
  ['charset latin1', '{"a":"é"}', 'application/json; charset=latin1'],
  ['xml', '<a>1</a>', 'application/xml'],
];

/**
 * `npm test` sends a sample of each kind of bad input (every operation and identity still gets its
 * documented request); DIALER_FUZZ_FULL=1 sends all of them, to every field at every depth.
 */
const FULL = process.env.DIALER_FUZZ_FULL === '1';
const pick = <T,>(all: T[], quick: number[]): T[] => (FULL ? all : quick.map((i) => all[i]!).filter(Boolean));

const BAD_IDS = ['../../etc/passwd', '..%2F..%2Fetc%2Fpasswd', '%2e%2e%2f%2e%2e%2f', 'z'.repeat(101), 'z'.repeat(64), '%00', 'a%00b', '%zz', '%ED%A0%80', '%F0%9F%92%A5', "'%20OR%201=1", '-1', '0', '%20', '.', '..', 'nul%0Aline'];
const BAD_QUERIES = ['page=-1', 'page=0', 'page=abc', 'page_size=100000', 'page=1&page=2', 'page_size=1e9', 'status=%00', 'x=%ED%A0%80', `q=${'a'.repeat(5000)}`, 'from=yesterday', 'reseller_id[]=a', '%zz=1', 'template=%F0%9F%92%A5'];

type Schema = { type?: string | string[]; properties?: Record<string, Schema>; required?: string[]; items?: Schema; examples?: unknown[]; anyOf?: Schema[]; oneOf?: Schema[]; allOf?: Schema[]; enum?: unknown[]; const?: unknown; default?: unknown; format?: string; minLength?: number };

/** A plausible value for a schema (its example, default, enum or type). */
function sample(schema: Schema | undefined, depth = 0): unknown {
  if (!schema || depth > 6) return null;
  if (schema.examples?.length) return schema.examples[0];
  if (schema.const !== undefined) return schema.const;
  if (schema.enum?.length) return schema.enum[0];
  if (schema.default !== undefined) return schema.default;
  const branch = schema.anyOf?.[0] ?? schema.oneOf?.[0];
  if (branch) return sample(branch, depth + 1);
  if (schema.allOf) return Object.assign({}, ...schema.allOf.map((s) => sample(s, depth + 1) as object));
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case 'object':
      return Object.fromEntries(Object.entries(schema.properties ?? {}).map(([k, v]) => [k, sample(v, depth + 1)]));
    case 'array':
      return [sample(schema.items, depth + 1)];
    case 'integer':
    case 'number':
      return 1;
    case 'boolean':
      return true;
    case 'string':
      return schema.format === 'date-time' ? new Date().toISOString() : schema.format === 'uri' ? 'https://example.com/x' : 'fuzz';
    default:
      return null;
  }
}

/** JSON pointers of a value's fields (objects and arrays), up to a depth. */
function fields(value: unknown, prefix = '', depth = 0): string[] {
  if (depth > 4 || value === null || typeof value !== 'object') return [];
  const entries = Array.isArray(value) ? value.slice(0, 2).map((v, i) => [String(i), v] as const) : Object.entries(value);
  return entries.flatMap(([k, v]) => [`${prefix}/${k}`, ...fields(v, `${prefix}/${k}`, depth + 1)]);
}

/** The body as JSON text with the field at `pointer` replaced by raw JSON text. */
function replaced(body: unknown, pointer: string, rawJson: string): string {
  const marker = `__FUZZ_${Math.random().toString(36).slice(2)}__`;
  const copy = JSON.parse(JSON.stringify(body)) as Record<string, unknown>;
  const keys = pointer.split('/').slice(1);
  let at: any = copy;
  for (const k of keys.slice(0, -1)) at = at[k];
  at[keys.at(-1)!] = marker;
  return JSON.stringify(copy).replace(JSON.stringify(marker), rawJson);
}

it('sees no 5xx from any endpoint, whatever it is sent', { timeout: 1_800_000 }, async () => {
  // A world to fuzz: tokens of several roles and ids that exist.
  const login = await json('POST', '/login', undefined, { email: adminEmail, password: adminPassword });
  assert.equal(login.status, 200, JSON.stringify(login.body));
  const admin = login.body.access_token as string;
  const reseller = (await json('POST', '/resellers', admin, { name: 'Fuzz' })).body.id as string;
  const merchant = (await json('POST', '/merchants', admin, { name: 'FuzzShop', reseller_id: reseller, contact_email: 'shop@example.com' })).body.id as string;
  const resellerToken = (await json('POST', '/s2s-token', admin, { name: 'fuzz reseller', role: 'reseller', reseller_id: reseller })).body.token as string;
  const userToken = (await json('POST', '/s2s-token', admin, { name: 'fuzz user', role: 'user', reseller_id: reseller, merchant_id: merchant })).body.token as string;
  const template = (await json('POST', '/templates', resellerToken, { name: 'fuzz', reseller_id: reseller, flow: { initial_node: 'a', nodes: [{ node_name: 'a', task_messages: [{ role: 'system', content: 'Hi {name}' }] }] } })).body.id as string;
  await json('POST', '/configurations', resellerToken, { reseller_id: reseller, template, calling_provider: 'PROVIDER_A' });
  const lead = (await json('POST', '/leads', resellerToken, { request_id: 'fuzz', template: 'fuzz', reseller_id: reseller, payload: { name: 'x' } })).body.lead_call_tracker_id as string;
  const validId: Record<string, string> = { id: lead, lead_id: lead, call_sid: 'CA0000', template: template, merchant: merchant };

  const doc = JSON.parse((await send('GET', `${API_PREFIX}/openapi.json`)).body) as { paths: Record<string, Record<string, { requestBody?: { content?: Record<string, { schema?: Schema }> }; parameters?: Array<{ in: string; name: string }> }>> };
  const operations: Array<{ method: string; path: string; body?: Schema; query: string[] }> = [];
  for (const [p, ops] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(ops)) {
      if (!['get', 'post', 'put', 'delete', 'patch'].includes(method)) continue;
      operations.push({ method: method.toUpperCase(), path: p, body: op.requestBody?.content?.['application/json']?.schema, query: (op.parameters ?? []).filter((x) => x.in === 'query').map((x) => x.name) });
    }
  }
  for (const provider of ['provider_a', 'provider_b', 'provider_c']) {
    for (const suffix of ['answer', 'callback/status', 'callback/details', 'callback/transfer/status', 'callback/transfer/events']) {
      for (const method of ['GET', 'POST']) operations.push({ method, path: `${API_PREFIX}/${provider}/${suffix}`, query: ['s', 'CallSid'] });
    }
  }
  operations.push({ method: 'GET', path: `${API_PREFIX}/playground`, query: [] }, { method: 'GET', path: `${API_PREFIX}/no/such/route`, query: [] }, { method: 'GET', path: '/', query: [] });
  assert.ok(operations.length >= 40, `${operations.length} operations`);

  const identities: Array<[string, Record<string, string>]> = [
    ['admin', { authorization: `Bearer ${admin}` }],
    ['reseller s2s', { authorization: `Bearer ${resellerToken}` }],
    ['user s2s', { authorization: `Bearer ${userToken}` }],
    ['forged', { authorization: 'Bearer s2s_forged' }],
    ['garbage jwt', { authorization: 'Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.' }],
    ['none', {}],
  ];

  for (const op of operations) {
    const concrete = (ids: Record<string, string>) => op.path.replace(/\{(\w+)\}/g, (_m, name: string) => ids[name] ?? 'fuzz-id');
    const baseBody = op.body ? sample(op.body) : undefined;
    for (const [who, auth] of identities) {
      const target = concrete(validId);
      // The operation as documented, then each body field spoilt in every way.
      const bodyText = baseBody === undefined ? undefined : JSON.stringify(baseBody);
      task(`${who} ${op.method} ${target}`, () => send(op.method, target, { ...auth, ...(bodyText ? { 'content-type': 'application/json' } : {}) }, bodyText));
      if (who === 'forged' || who === 'garbage jwt') continue;
      // Spoilt fields as principals who get past authentication (without one, a 401 comes first).
      if (baseBody !== undefined && who === 'admin') {
        for (const pointer of ['', ...(FULL ? fields(baseBody) : Object.keys(baseBody as object).map((k) => `/${k}`))]) {
          for (const [label, raw] of pick(BAD_VALUES, [0, 1, 7, 9, 10])) {
            const text = pointer === '' ? raw : replaced(baseBody, pointer, raw);
            task(`${who} ${op.method} ${target} ${pointer || '(body)'}=${label}`, () => send(op.method, target, { ...auth, 'content-type': 'application/json' }, text));
          }
        }
      }
      if (who === 'none' || who === 'user s2s') continue;
      if (op.method !== 'GET') {
        for (const [label, raw, type] of pick(MALFORMED_BODIES, [0, 1, 7, 11, 12, 13])) {
          task(`${who} ${op.method} ${target} ${label}`, () => send(op.method, target, { ...auth, 'content-type': type }, raw));
        }
        task(`${who} ${op.method} ${target} no content-type`, () => send(op.method, target, auth, '{"a":1}'));
      }
      if (!FULL && who !== 'admin') continue;
      for (const q of [...pick(BAD_QUERIES, [0, 2, 5, 6, 7]), ...op.query.flatMap((name) => pick([`${name}=%00`, `${name}=${'9'.repeat(40)}`, `${name}=%F0%9F%92%A5`, `${name}=-1`], [0, 1]))]) {
        task(`${who} ${op.method} ${target}?${q}`, () => send(op.method, `${target}?${q}`, auth));
      }
      if (op.path.includes('{')) {
        for (const bad of pick(BAD_IDS, [0, 3, 5, 8, 9, 16])) {
          const p = op.path.replace(/\{(\w+)\}/g, bad);
          task(`${who} ${op.method} ${p}`, () => send(op.method, p, { ...auth, ...(bodyText ? { 'content-type': 'application/json' } : {}) }, bodyText));
        }
      }
    }
  }

  // Odd requests the router sees before any route: methods, paths, headers.
  for (const [method, p, headers] of [
    ['PATCH', `${API_PREFIX}/leads`, {}],
    ['OPTIONS', `${API_PREFIX}/leads`, {}],
    ['HEAD', `${API_PREFIX}/health`, {}],
    ['TRACE', `${API_PREFIX}/health`, {}],
    ['GET', `${API_PREFIX}//leads`, {}],
    ['GET', `${API_PREFIX}/leads/`, {}],
    ['GET', `${API_PREFIX}/../../etc/passwd`, {}],
    ['GET', `${API_PREFIX}/leads?${'a=1&'.repeat(2000)}`, {}],
    ['GET', `${API_PREFIX}/leads`, { authorization: 'Basic YWRtaW46YWRtaW4=' }],
    ['GET', `${API_PREFIX}/leads`, { authorization: `Bearer ${'x'.repeat(10_000)}` }],
    ['GET', `${API_PREFIX}/leads`, { authorization: 'Bearer' }],
    ['GET', `${API_PREFIX}/health`, { 'x-request-id': 'x'.repeat(5000) }],
    ['GET', `${API_PREFIX}/health`, { 'accept-version': '9.9.9' }],
    ['GET', `${API_PREFIX}/metrics`, { authorization: 'Bearer wrong' }],
  ] as Array<[string, string, Record<string, string>]>) {
    task(`${method} ${p.slice(0, 80)}`, () => send(method, p, headers));
  }

  await drain();

  const tally = [...statuses].sort(([a], [b]) => a - b).map(([status, n]) => `${status}: ${n}`).join(', ');
  process.stdout.write(`fuzz: ${requests} requests to ${operations.length} operations${external ? ` at ${base}` : ''}, ${failures.length} failures (5xx, no answer, or a 4xx that is not a problem); statuses ${tally}\n`);
  assert.deepEqual(failures.slice(0, 40), [], `${failures.length} failures`);
  assert.doesNotMatch(logs, /unhandled error/, 'no unhandled error was logged');
  // Nor any other error (an audit entry not written, a failed query): bad input is not the service's failure.
  assert.doesNotMatch(logs, /"level":(50|60)/, `no error was logged: ${logs.split('\n').find((l) => /"level":(50|60)/.test(l))?.slice(0, 600)}`);
});
