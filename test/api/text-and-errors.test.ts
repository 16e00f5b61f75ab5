/**
 * Bad text and Fastify's own errors: a lone UTF-16 surrogate or a NUL character in every string
 * field of the push, batch, template, configuration and merchant bodies answers 400 naming the
 * field with nothing written; 404, 413, 414, 415, bad JSON, a bad %-escape and a request Node's
 * parser refuses are all problems with stable codes; every response carries the security headers.
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import { buildTestApp, PREFIX, type Client, type TestApp } from '../helpers/app.js';
import { buildWorld, type World } from '../helpers/world.js';

let t: TestApp;
let w: World;
let templateId: string;

before(async () => {
  t = await buildTestApp({ env: { DIALER_BODY_LIMIT_BYTES: '65536' } });
  w = await buildWorld(t);
  const tpl = await w.reseller1.post('/templates', { name: 'text', reseller_id: w.r1, flow: flow() });
  assert.equal(tpl.status, 200, JSON.stringify(tpl.body));
  templateId = tpl.body.id;
});
after(() => t.close());

function flow() {
  return {
    initial_node: 'a',
    nodes: [
      {
        node_name: 'a',
        task_messages: [{ role: 'system', content: 'Hi {name}' }],
        functions: [{ name: 'save', description: 'Save it', properties: { note: { type: 'string', description: 'A note' } }, hooks: [{ name: 'crm', http_request: { url: 'https://crm.example.com/x', headers: { 'x-a': 'b' } } }] }],
      },
    ],
  };
}

/** JSON pointers of every string leaf in a value. */
function stringPaths(value: unknown, path = ''): string[] {
  if (typeof value === 'string') return [path];
  if (Array.isArray(value)) return value.flatMap((v, i) => stringPaths(v, `${path}/${i}`));
  if (value && typeof value === 'object') return Object.entries(value).flatMap(([k, v]) => stringPaths(v, `${path}/${k}`));
  return [];
}

function withText(body: unknown, pointer: string, bad: string): unknown {
  const copy = JSON.parse(JSON.stringify(body)) as Record<string, unknown>;
  const keys = pointer.split('/').slice(1);
  let at: any = copy;
  for (const k of keys.slice(0, -1)) at = at[k];
  at[keys.at(-1)!] = `x${bad}y`;
  return copy;
}

const counts = async () =>
  (await t.db.query<{ n: string }>(`SELECT (SELECT count(*) FROM leads) || '/' || (SELECT count(*) FROM templates) || '/' || (SELECT count(*) FROM configurations) || '/' || (SELECT count(*) FROM merchants) AS n`)).rows[0]!.n;

describe('text that cannot be stored', () => {
  const cases = (): Array<[string, Client, string, unknown]> => {
    const push = { request_id: 'r-1', template: 'text', reseller_id: w.r1, merchant_id: w.m1, payload: { customer_mobile_number: '+14155550123', name: 'Ana', nested: { list: ['a', 'b'] } }, reporting_webhook_url: 'https://crm.example.com/hook' };
    return [
      ['POST /leads', w.reseller1, '/leads', push],
      ['POST /leads/batch', w.reseller1, '/leads/batch', { leads: [push, { ...push, request_id: 'r-2' }] }],
      ['POST /templates', w.reseller1, '/templates', { name: 'other', reseller_id: w.r1, flow: flow() }],
      [
        'POST /configurations',
        w.reseller1,
        '/configurations',
        {
          reseller_id: w.r1,
          template: templateId,
          calling_provider: 'PROVIDER_A',
          call_timezone: 'Europe/London',
          call_start_time: '09:00',
          call_end_time: '17:00',
          inbound_block_message: 'Closed',
          rate_limit_whitelist: ['+14155550123'],
          pre_checks: [{ name: 'dnc', type: 'external_api', http_request: { url: 'https://crm.example.com/dnc', headers: { 'x-k': 'v' } }, response_config: { response_field: 'ok', response_field_value: 'yes' } }],
          service_callback_url: 'https://crm.example.com/cb',
        },
      ],
      ['POST /merchants', w.reseller1, '/merchants', { name: 'Shop', reseller_id: w.r1, contact_email: 'shop@example.com' }],
    ];
  };

  it('a lone surrogate or a NUL in any string field answers 400 invalid_text naming the field, and nothing is written', async () => {
    const before = await counts();
    let checked = 0;
    for (const [label, as, path, body] of cases()) {
      for (const pointer of stringPaths(body)) {
        for (const bad of ['\ud800', '\udfff', '\u0000']) {
          const res = await as.post(path, withText(body, pointer, bad));
          assert.equal(res.status, 400, `${label} ${pointer} ${JSON.stringify(bad)}: ${res.status} ${JSON.stringify(res.body)}`);
          assert.equal(res.body.code, 'invalid_text');
          assert.deepEqual(res.body.errors.map((e: { path: string }) => e.path), [pointer], label);
          checked++;
        }
      }
    }
    assert.ok(checked > 60, `checked ${checked} fields`);
    // A bad key is refused as well, and a well-formed pair (an emoji) is fine.
    const key = await w.reseller1.post('/leads', { request_id: 'k', template: 'text', reseller_id: w.r1, payload: { ['na\ud800me']: 'x' } });
    assert.equal(key.status, 400);
    assert.equal(await counts(), before, 'nothing was written');
    const emoji = await w.reseller1.post('/leads', { request_id: 'emoji 😀', template: 'text', reseller_id: w.r1, merchant_id: w.m1, payload: { customer_mobile_number: '+14155550123', name: '😀 Ana' } });
    assert.equal(emoji.status, 201, JSON.stringify(emoji.body));
  });

  it('a NUL in a query or path answers 400 naming it', async () => {
    const q = await w.reseller1.get('/leads?request_id=a%00b');
    assert.equal(q.status, 400);
    assert.equal(q.body.code, 'invalid_text');
    assert.equal(q.body.errors[0].path, '/request_id');
    const p = await w.reseller1.get('/leads/a%00b');
    assert.equal(p.status, 400);
    assert.equal(p.body.errors[0].path, '/id');
  });
});

describe('bytes that are not UTF-8', () => {
  it('a query whose %-escapes are not UTF-8 (an encoded lone surrogate) answers 400 invalid_text naming it; a real emoji is fine', async () => {
    for (const [query, field] of [
      ['search=%ED%A0%80', '/search'],
      ['q=%ED%A0%80', '/q'],
      ['q=ok&status=%FF', '/status'],
      ['q=caf%E9', '/q'],
      ['%ED%A0%80=x', '/%ED%A0%80'],
    ] as const) {
      const res = await w.reseller1.get(`/leads?${query}`);
      assert.equal(res.status, 400, `${query}: ${res.status} ${JSON.stringify(res.body)}`);
      assert.equal(res.body.code, 'invalid_text', query);
      assert.equal(res.body.errors[0].path, field, query);
    }
    const emoji = await w.reseller1.get('/leads?q=%F0%9F%98%80&search=caf%C3%A9');
    assert.equal(emoji.status, 200, JSON.stringify(emoji.body));
    // The check runs before any route's own rules: a public route is covered too.
    assert.equal((await t.anon.get('/health?x=%ED%B0%80')).status, 400);
  });

  it('a JSON body that is not UTF-8 answers 400 invalid_text on every JSON route, and nothing is written', async () => {
    const before = await counts();
    const latin1 = (body: unknown) => Buffer.from(JSON.stringify(body).replace('LATIN', 'caf\u00e9'), 'latin1');
    const bodies: Array<[string, string, unknown]> = [
      ['POST', '/leads', { request_id: 'LATIN', template: 'text', reseller_id: w.r1, merchant_id: w.m1, payload: { customer_mobile_number: '+14155550123', name: 'Ana' } }],
      ['POST', '/leads/batch', { leads: [{ request_id: 'LATIN', template: 'text', reseller_id: w.r1, merchant_id: w.m1, payload: { name: 'Ana' } }] }],
      ['POST', '/templates', { name: 'LATIN', reseller_id: w.r1, flow: flow() }],
      ['PUT', `/templates/${templateId}`, { name: 'LATIN', reseller_id: w.r1, flow: flow() }],
      ['POST', '/merchants', { name: 'LATIN', reseller_id: w.r1, contact_email: 'shop@example.com' }],
    ];
    for (const [method, path, body] of bodies) {
      const payload = latin1(body);
      assert.ok(payload.includes(0xe9), 'the body carries a Latin-1 byte');
      const res = await w.reseller1.raw({ method, path: `${PREFIX}${path}`, payload, headers: { 'content-type': 'application/json' } });
      assert.equal(res.status, 400, `${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`);
      assert.equal(res.body.code, 'invalid_text');
      assert.match(res.body.detail, /UTF-8/);
    }
    // An encoded surrogate (CESU-8) and a truncated sequence are refused too; the same text as UTF-8 is not.
    const push = (name: Buffer) =>
      w.reseller1.raw({
        method: 'POST',
        path: `${PREFIX}/leads`,
        payload: Buffer.concat([Buffer.from(`{"request_id":"u","template":"text","reseller_id":"${w.r1}","merchant_id":"${w.m1}","payload":{"name":"`), name, Buffer.from('"}}')]),
        headers: { 'content-type': 'application/json' },
      });
    assert.equal((await push(Buffer.from([0xed, 0xa0, 0x80]))).status, 400);
    assert.equal((await push(Buffer.from([0x61, 0xc3]))).status, 400);
    assert.equal(await counts(), before, 'nothing was written');
    const fine = await push(Buffer.from('café', 'utf8'));
    assert.equal(fine.status, 201, JSON.stringify(fine.body));
    const lead = await w.reseller1.get(`/leads/${fine.body.lead_call_tracker_id}`);
    assert.equal(lead.body.payload.name, 'café');
  });
});

describe('a lead of a batch larger than POST /leads accepts', () => {
  it('is refused on its own with the 413 POST /leads answers, naming it; the others are queued and it is not', async () => {
    const lead = (request_id: string, pad = '') => ({ request_id, template: 'text', reseller_id: w.r1, merchant_id: w.m1, payload: { customer_mobile_number: '+14155550124', name: 'Ana', pad } });
    const big = lead('too-big', 'x'.repeat(70_000)); // the limit here is 64 KiB
    const alone = await w.reseller1.post('/leads', big);
    assert.equal(alone.status, 413, JSON.stringify(alone.body));
    const res = await w.reseller1.post('/leads/batch', { leads: [lead('small-1'), big, lead('small-2')] });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.queued, 2);
    assert.equal(res.body.rejected, 1);
    assert.deepEqual(res.body.results.map((r: { status: number }) => r.status), [201, 413, 201]);
    const problem = res.body.results[1].problem;
    assert.equal(problem.code, 'body_too_large');
    assert.match(problem.detail, /^Lead 1 is \d+ bytes, larger than the 65536 bytes POST \/leads accepts$/);
    assert.deepEqual(problem.errors, [{ path: '/leads/1', message: 'is larger than 65536 bytes' }]);
    const stored = await t.db.query<{ request_id: string }>(`SELECT request_id FROM leads WHERE request_id IN ('small-1', 'small-2', 'too-big') ORDER BY request_id`);
    assert.deepEqual(stored.rows.map((r) => r.request_id), ['small-1', 'small-2']);
  });

  it('a lead nested too deeply to measure is refused on its own too (422), never a 500', async () => {
    const depth = 5000;
    const deep = `{"request_id":"too-deep","template":"text","reseller_id":"${w.r1}","merchant_id":"${w.m1}","payload":{"name":"Ana","x":${'['.repeat(depth)}${']'.repeat(depth)}}}`;
    const ok = JSON.stringify({ request_id: 'beside-deep', template: 'text', reseller_id: w.r1, merchant_id: w.m1, payload: { name: 'Ana' } });
    const res = await w.reseller1.raw({ method: 'POST', path: `${PREFIX}/leads/batch`, payload: `{"leads":[${ok},${deep}]}`, headers: { 'content-type': 'application/json' } });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(res.body.results.map((r: { status: number }) => r.status), [201, 422]);
    assert.deepEqual(res.body.results[1].problem.errors, [{ path: '/leads/1', message: 'is nested too deeply' }]);
  });
});

describe("Fastify's own errors are problems", () => {
  const expectProblem = (res: { status: number; headers: Record<string, unknown>; body: any }, status: number, code: string) => {
    assert.equal(res.status, status, JSON.stringify(res.body));
    assert.match(String(res.headers['content-type']), /^application\/problem\+json/);
    assert.equal(res.body.code, code);
    assert.equal(res.body.status, status);
    assert.equal(res.body.type, `urn:dialer:problem:${code}`);
  };

  it('404 on an unknown route, 414 on an over-long id, 400 on a bad %-escape', async () => {
    expectProblem(await w.reseller1.get('/no-such-route'), 404, 'route_not_found');
    expectProblem(await w.reseller1.get(`/leads/${'z'.repeat(300)}`), 414, 'uri_too_long');
    expectProblem(await w.reseller1.get('/leads/%zz'), 400, 'bad_url');
  });

  it('413 on a huge body, 415 on a non-JSON body, 400 on malformed or empty JSON', async () => {
    const raw = (payload: string, type = 'application/json') => w.reseller1.raw({ method: 'POST', path: `${PREFIX}/leads`, payload, headers: { 'content-type': type } });
    expectProblem(await raw(JSON.stringify({ pad: 'x'.repeat(100_000) })), 413, 'body_too_large');
    expectProblem(await raw('hello', 'text/plain'), 415, 'unsupported_media_type');
    expectProblem(await raw('a=1', 'application/x-www-form-urlencoded'), 415, 'unsupported_media_type');
    expectProblem(await raw('{"a":'), 400, 'invalid_json');
    expectProblem(await raw(''), 400, 'invalid_json');
  });

  it("a request Node's HTTP parser refuses gets a problem on the socket", async () => {
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = t.app.server.address() as net.AddressInfo;
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = net.connect(port, '127.0.0.1', () => socket.write('GET /x HTTP/1.1\r\nHost: a\r\nBad Header\r\n\r\n'));
      let data = '';
      socket.on('data', (d) => (data += d));
      socket.on('end', () => resolve(data));
      socket.on('error', reject);
    });
    assert.match(answer, /^HTTP\/1\.1 400 /);
    assert.match(answer, /content-type: application\/problem\+json/i);
    assert.match(answer, /x-content-type-options: nosniff/i);
    assert.match(answer, /"code":"bad_request"/);
  });
});

describe('security headers', () => {
  it('are on every response: success, problem, 404, pre-routing errors, docs', async () => {
    const responses = [
      await t.anon.get('/health'),
      await t.anon.get('/leads'),
      await w.reseller1.get('/leads'),
      await w.reseller1.get('/nowhere'),
      await w.reseller1.get(`/leads/${'z'.repeat(300)}`),
      await t.anon.get('/openapi.json'),
    ];
    for (const res of responses) {
      assert.equal(res.headers['x-content-type-options'], 'nosniff', String(res.status));
      assert.equal(res.headers['x-frame-options'], 'SAMEORIGIN');
      assert.equal(res.headers['referrer-policy'], 'no-referrer');
      assert.match(String(res.headers['content-security-policy']), /frame-ancestors 'self'/);
    }
  });
});
