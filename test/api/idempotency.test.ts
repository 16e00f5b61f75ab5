/**
 * The Idempotency-Key header of POST /leads and POST /leads/batch: a retry with the same key and
 * body gets the first answer again (status and body, Idempotent-Replayed) and queues nothing; the
 * same key with another body is 409; concurrent requests with one key queue one lead; keys belong
 * to their principal; a refusal is kept, a failure (5xx) is not; an unanswered claim of a request
 * that died is taken over; keys expire after 24 hours and are pruned; an over-long key is 400.
 * Without the header, nothing changes: the same body twice queues two leads.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Db, Queryable } from '../../src/db/index.js';
import { buildTestApp, PREFIX, type Client, type Response, type TestApp } from '../helpers/app.js';
import { buildWorld, type World } from '../helpers/world.js';

let t: TestApp;
let w: World;
let templateName: string;

before(async () => {
  t = await buildTestApp();
  w = await buildWorld(t);
  templateName = 'keyed';
  const tpl = await w.reseller1.post('/templates', { name: templateName, reseller_id: w.r1, flow: { initial_node: 'a', nodes: [{ node_name: 'a', task_messages: [{ role: 'system', content: 'Hi {customer_name}' }] }] } });
  assert.equal(tpl.status, 200, JSON.stringify(tpl.body));
});
after(() => t.close());

let seq = 0;
const lead = (patch: Record<string, unknown> = {}) => ({
  request_id: `key-${++seq}`,
  template: templateName,
  reseller_id: w.r1,
  payload: { customer_mobile_number: `+1646555${String(3000 + seq)}`, customer_name: 'Ada' },
  ...patch,
});

const send = (as: Client, path: string, body: unknown, key?: string): Promise<Response> =>
  as.raw({ method: 'POST', path: `${PREFIX}${path}`, payload: JSON.stringify(body), headers: { 'content-type': 'application/json', ...(key === undefined ? {} : { 'idempotency-key': key }) } });

const leadsWith = async (requestIds: string[]) =>
  (await t.db.query<{ id: string; request_id: string }>('SELECT id, request_id FROM leads WHERE request_id = ANY($1) ORDER BY request_id', [requestIds])).rows;

/** The same answer: status, and the body as sent (JSON.parse keeps its order). */
function assertSameAnswer(again: Response, first: Response): void {
  assert.equal(again.status, first.status, JSON.stringify(again.body));
  assert.equal(JSON.stringify(again.body), JSON.stringify(first.body));
  assert.equal(again.headers['content-type'], first.headers['content-type']);
  assert.equal(again.headers['idempotent-replayed'], 'true');
  assert.equal(first.headers['idempotent-replayed'], undefined);
}

describe('POST /leads with an Idempotency-Key', () => {
  it('a retry with the same key and body answers the first answer and queues no second lead', async () => {
    const body = lead();
    const first = await send(w.reseller1, '/leads', body, 'order-1042-try');
    assert.equal(first.status, 201, JSON.stringify(first.body));
    const again = await send(w.reseller1, '/leads', body, 'order-1042-try');
    assertSameAnswer(again, first);
    const rows = await leadsWith([body.request_id]);
    assert.deepEqual(rows.map((r) => r.id), [first.body.lead_call_tracker_id]);
  });

  it('the same key with another body is 409 idempotency_key_reused, and nothing is queued', async () => {
    const body = lead();
    assert.equal((await send(w.reseller1, '/leads', body, 'reused-key')).status, 201);
    const other = lead();
    const res = await send(w.reseller1, '/leads', other, 'reused-key');
    assert.equal(res.status, 409, JSON.stringify(res.body));
    assert.equal(res.body.code, 'idempotency_key_reused');
    assert.match(String(res.headers['content-type']), /application\/problem\+json/);
    assert.deepEqual(await leadsWith([other.request_id]), []);
  });

  it('concurrent requests with one key queue one lead: each answers it or 409 idempotency_key_in_use', async () => {
    const body = lead();
    const answers = await Promise.all(Array.from({ length: 6 }, () => send(w.reseller1, '/leads', body, 'concurrent-key')));
    const created = answers.filter((a) => a.status === 201);
    assert.ok(created.length >= 1, JSON.stringify(answers.map((a) => a.status)));
    for (const a of answers) {
      if (a.status === 201) assert.equal(a.body.lead_call_tracker_id, created[0]!.body.lead_call_tracker_id);
      else {
        assert.equal(a.status, 409, JSON.stringify(a.body));
        assert.equal(a.body.code, 'idempotency_key_in_use');
        assert.equal(a.headers['retry-after'], '1');
      }
    }
    assert.equal((await leadsWith([body.request_id])).length, 1);
    // Once answered, the key answers every retry.
    assertSameAnswer(await send(w.reseller1, '/leads', body, 'concurrent-key'), created.find((a) => a.headers['idempotent-replayed'] === undefined)!);
  });

  it('a key belongs to its principal: another token with the same key and body queues its own lead', async () => {
    const body = lead({ merchant_id: w.m1 });
    const mine = await send(w.reseller1, '/leads', body, 'shared-key');
    const theirs = await send(w.merchant1, '/leads', body, 'shared-key');
    assert.equal(mine.status, 201);
    assert.equal(theirs.status, 201, JSON.stringify(theirs.body));
    assert.equal(theirs.headers['idempotent-replayed'], undefined);
    assert.notEqual(theirs.body.lead_call_tracker_id, mine.body.lead_call_tracker_id);
    assert.equal((await leadsWith([body.request_id])).length, 2);
  });

  it('a refusal (4xx) is the first answer too; a key longer than 255 characters is 400 on both routes', async () => {
    const body = lead({ template: 'no-such-template' });
    const first = await send(w.reseller1, '/leads', body, 'refused-key');
    assert.equal(first.status, 404);
    assertSameAnswer(await send(w.reseller1, '/leads', body, 'refused-key'), first);

    for (const [path, payload] of [['/leads', lead()], ['/leads/batch', { leads: [lead()] }]] as const) {
      const long = await send(w.reseller1, path, payload, 'k'.repeat(256));
      assert.equal(long.status, 400, `${path}: ${JSON.stringify(long.body)}`);
      assert.equal(long.body.code, 'validation_failed');
      assert.equal(long.body.errors[0].path, '/idempotency-key');
      assert.match(long.body.detail, /^Header: \/idempotency-key/);
      assert.equal((await send(w.reseller1, path, payload, (path === '/leads' ? 'a' : 'b').repeat(255))).status, path === '/leads' ? 201 : 200);
    }
    assert.equal((await send(w.reseller1, '/leads', lead(), 'caf\u00e9')).status, 400, 'printable ASCII only');
  });

  it('a failure (5xx, nothing queued) is not kept: the retry runs again and queues the lead once', async () => {
    const failInserts = (q: Queryable): Queryable => ({
      query: (sql, params, options) => (/INSERT INTO leads/.test(sql) ? Promise.reject(new Error('disk full')) : q.query(sql, params, options)),
      exec: (sql) => q.exec(sql),
    });
    const failing = { ...failInserts(t.db), kind: t.db.kind, tx: (fn) => t.db.tx((q) => fn(failInserts(q))), close: async () => {}, listen: (c, n) => t.db.listen(c, n) } as Db;
    const broken = await buildTestApp({ db: failing });
    const body = lead();
    try {
      const failed = await send(broken.admin, '/leads', body, 'after-a-failure');
      assert.equal(failed.status, 500, JSON.stringify(failed.body));
      assert.equal(failed.body.code, 'lead_not_queued');
    } finally {
      await broken.close();
    }
    assert.deepEqual(await leadsWith([body.request_id]), []);
    const retried = await send(t.admin, '/leads', body, 'after-a-failure');
    assert.equal(retried.status, 201, JSON.stringify(retried.body));
    assert.equal(retried.headers['idempotent-replayed'], undefined);
    assertSameAnswer(await send(t.admin, '/leads', body, 'after-a-failure'), retried);
    assert.equal((await leadsWith([body.request_id])).length, 1);
  });

  it('a claim left unanswered by a request that died is taken over after 30 s; a live one is not', async () => {
    const body = lead();
    // The fingerprint is the method, the route and the body: read it from a real claim with this body.
    assert.equal((await send(w.reseller1, '/leads', body, 'probe')).status, 201);
    const probe = (await t.db.query<{ scope: string; fingerprint: string }>(`SELECT scope, fingerprint FROM idempotency_keys WHERE key = 'probe'`)).rows[0]!;
    // Claims with this body, as requests leave them: one a minute old (it died), one fresh (under way).
    await t.db.query(
      `INSERT INTO idempotency_keys (scope, key, fingerprint, claim_token, claimed_at) VALUES ($1, 'died', $2, 'gone', now() - interval '1 minute'), ($1, 'alive', $2, 'busy', now())`,
      [probe.scope, probe.fingerprint],
    );
    const alive = await send(w.reseller1, '/leads', body, 'alive');
    assert.equal(alive.status, 409);
    assert.equal(alive.body.code, 'idempotency_key_in_use');
    assert.equal((await leadsWith([body.request_id])).length, 1);
    const died = await send(w.reseller1, '/leads', body, 'died');
    assert.equal(died.status, 201, JSON.stringify(died.body));
    assert.equal((await leadsWith([body.request_id])).length, 2);
  });
});

describe('POST /leads/batch with an Idempotency-Key', () => {
  it('a retry answers the first answer and queues nothing more; another body is 409', async () => {
    const body = { leads: [lead(), lead({ template: 'no-such-template' }), lead()] };
    const ids = body.leads.map((l) => l.request_id);
    const first = await send(w.reseller1, '/leads/batch', body, 'batch-key');
    assert.equal(first.status, 200, JSON.stringify(first.body));
    assert.equal(first.body.queued, 2);
    assertSameAnswer(await send(w.reseller1, '/leads/batch', body, 'batch-key'), first);
    assert.equal((await leadsWith(ids)).length, 2);
    const other = await send(w.reseller1, '/leads/batch', { leads: [lead()] }, 'batch-key');
    assert.equal(other.status, 409);
    assert.equal(other.body.code, 'idempotency_key_reused');
    // The key is per route as well: the same key on POST /leads is another request.
    assert.equal((await send(w.reseller1, '/leads', body.leads[0], 'batch-key')).status, 409);
    assert.equal((await leadsWith(ids)).length, 2);
  });
});

describe('without the header', () => {
  it('nothing changes: the same body twice queues two leads, with no replay header', async () => {
    const keys = async () => (await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM idempotency_keys')).rows[0]!.n;
    const keysBefore = await keys();
    const body = lead();
    const one = await send(w.reseller1, '/leads', body);
    const two = await send(w.reseller1, '/leads', body);
    assert.equal(one.status, 201);
    assert.equal(two.status, 201);
    assert.equal(two.headers['idempotent-replayed'], undefined);
    assert.equal((await leadsWith([body.request_id])).length, 2);
    const batch = { leads: [lead()] };
    assert.equal((await send(w.reseller1, '/leads/batch', batch)).status, 200);
    assert.equal((await send(w.reseller1, '/leads/batch', batch)).status, 200);
    assert.equal((await leadsWith([batch.leads[0]!.request_id])).length, 2);
    assert.equal(await keys(), keysBefore, 'no key was stored');
  });
});

describe('the OpenAPI document', () => {
  it('shows the header and the 409 on both operations', async () => {
    const doc = (await t.anon.get('/openapi.json')).body;
    for (const path of [`${PREFIX}/leads`, `${PREFIX}/leads/batch`]) {
      const op = doc.paths[path].post;
      const header = op.parameters.find((p: { in: string; name: string }) => p.in === 'header' && p.name === 'idempotency-key');
      assert.ok(header, `${path} documents Idempotency-Key`);
      assert.equal(header.required, false);
      assert.equal(header.schema.maxLength, 255);
      assert.ok(op.responses['409'], `${path} documents 409`);
    }
  });
});

describe('expiry', () => {
  it('a key is used afresh 24 hours after its first use, and expired keys are pruned', async () => {
    const body = lead();
    const first = await send(w.reseller1, '/leads', body, 'day-old');
    assert.equal(first.status, 201);
    await t.db.query(`UPDATE idempotency_keys SET created_at = now() - interval '25 hours' WHERE key = 'day-old'`);
    const other = lead();
    const fresh = await send(w.reseller1, '/leads', other, 'day-old');
    assert.equal(fresh.status, 201, JSON.stringify(fresh.body));
    assert.equal(fresh.headers['idempotent-replayed'], undefined);
    assert.equal((await leadsWith([other.request_id])).length, 1);

    // Pruning: a process prunes on its first keyed request (and every ten minutes after).
    await t.db.query(`INSERT INTO idempotency_keys (scope, key, fingerprint, claim_token, created_at) VALUES ('user:old', 'expired', 'f', 't', now() - interval '25 hours'), ('user:old', 'recent', 'f', 't', now() - interval '23 hours')`);
    const second = await buildTestApp({ db: t.db });
    try {
      assert.equal((await send(second.admin, '/leads', lead(), 'prune-trigger')).status, 201);
      const keysOf = async () => (await t.db.query<{ key: string }>(`SELECT key FROM idempotency_keys WHERE scope = 'user:old' ORDER BY key`)).rows.map((r) => r.key);
      const deadline = Date.now() + 10_000;
      while ((await keysOf()).includes('expired') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      assert.deepEqual(await keysOf(), ['recent']);
    } finally {
      await second.close();
    }
  });
});
