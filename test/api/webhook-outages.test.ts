/**
 * Webhooks under a receiver's trouble, against real local receivers: a receiver that is down (its
 * port refuses connections) and comes back gets every webhook; a receiver that never answers delays
 * no one else's; a worker killed mid-delivery is taken over by another with the next attempt
 * number; a redelivery by hand keeps the delivery id.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, afterEach, before, describe, it } from 'node:test';
import { webhookSettings, type WebhookSettings } from '../../src/config/webhooks.js';
import { createLogger } from '../../src/lib/logger.js';
import { enqueueReportingWebhook, WebhookDispatcher } from '../../src/webhooks/index.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { testBackend } from '../helpers/db.js';
import { buildWorld, type World } from '../helpers/world.js';

const log = createLogger('silent');
let t: TestApp;
let w: World;

interface Hit {
  leadId: string;
  deliveryId: string;
  attempt: number;
  status: number | 'held';
  at: number;
}

/**
 * A receiver on a port of its own that can go down (the port refuses connections) and come back
 * on the same port. `answer` decides each request's status; 'hold' never answers.
 */
class Receiver {
  readonly hits: Hit[] = [];
  /** Requests being held open right now, and the most ever held at once. */
  held = 0;
  maxHeld = 0;
  port = 0;
  private server: http.Server | undefined;
  constructor(public answer: (hit: Omit<Hit, 'status' | 'at'>) => number | 'hold' = () => 200) {
    receivers.push(this);
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async up(): Promise<void> {
    const server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        const hit = { leadId: JSON.parse(body).leadId as string, deliveryId: String(req.headers['x-dialer-delivery-id']), attempt: Number(req.headers['x-dialer-attempt']) };
        const status = this.answer(hit);
        this.hits.push({ ...hit, status: status === 'hold' ? 'held' : status, at: performance.now() });
        if (status !== 'hold') return void res.writeHead(status).end();
        this.held++;
        this.maxHeld = Math.max(this.maxHeld, this.held);
        res.on('close', () => this.held--);
      });
    });
    await new Promise<void>((r) => server.listen(this.port, '127.0.0.1', r));
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
  }

  async down(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    const closed = new Promise<void>((r) => server.close(() => r()));
    server.closeAllConnections();
    await closed;
  }

  /** The leads it answered 2xx for. */
  delivered(): Set<string> {
    return new Set(this.hits.filter((h) => typeof h.status === 'number' && h.status < 300).map((h) => h.leadId));
  }
}

before(async () => {
  t = await buildTestApp();
  w = await buildWorld(t);
  const tpl = await w.reseller1.post('/templates', {
    name: 'outage',
    reseller_id: w.r1,
    flow: { initial_node: 'a', nodes: [{ node_name: 'a', task_messages: [{ role: 'system', content: 'Hi' }] }] },
  });
  await w.reseller1.post('/configurations', { reseller_id: w.r1, template: tpl.body.id, calling_provider: 'PROVIDER_A', call_start_time: '00:00', call_end_time: '00:00', max_retry: 0 });
});
afterEach(async () => {
  await Promise.all(receivers.splice(0).map((r) => r.down()));
  await Promise.all(dispatchers.splice(0).map((d) => d.stop()));
});
after(async () => {
  await t.close();
});

let seq = 0;
/** Pushes `n` leads reporting to `url`. */
async function pushLeads(url: string, n: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    seq++;
    const res = await w.reseller1.post('/leads', {
      request_id: `order-${seq}`,
      template: 'outage',
      reseller_id: w.r1,
      payload: { customer_mobile_number: `+1646555${String(1000 + seq)}` },
      reporting_webhook_url: url,
    });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    ids.push(res.body.lead_call_tracker_id);
  }
  return ids;
}

/** Finishes pushed leads in one transaction, as the scheduler would, queueing their webhooks. */
async function finishLeads(ids: string[]): Promise<string[]> {
  await t.db.tx(async (q) => {
    await q.query(`UPDATE leads SET status = 'FINISHED', outcome = 'no_answer', attempt_count = 1 WHERE id = ANY($1::text[])`, [ids]);
    for (const id of ids) await enqueueReportingWebhook(q, id);
  });
  return ids;
}

const finishedLeads = async (url: string, n: number) => finishLeads(await pushLeads(url, n));

/** Waits for a condition; gives up (failing the test) after `limitMs`, so a defect fails instead of hanging. */
async function until(what: string, check: () => boolean | Promise<boolean>, limitMs = 90_000): Promise<void> {
  const deadline = Date.now() + limitMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`gave up waiting: ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

const deliveries = async (leadId: string) => (await w.reseller1.get(`/leads/${leadId}/webhooks`)).body.data as Array<{
  id: string;
  status: string;
  attempts: number;
  redelivery_of: string | null;
  next_attempt_at: string | null;
  attempt_log: Array<{ attempt: number; status_code: number | null; error: string | null }>;
}>;
const statuses = async (ids: string[]) => (await t.db.query<{ status: string; attempts: number }>(
  `SELECT status, attempts FROM webhook_deliveries WHERE lead_id = ANY($1::text[])`, [ids])).rows;

const settings = (patch: Partial<WebhookSettings>): WebhookSettings => ({ ...webhookSettings({}), timeoutMs: 2000, ...patch });
/** Every dispatcher a test makes is stopped after it, also when it fails: none goes on to serve the next test. */
const dispatchers: WebhookDispatcher[] = [];
const dispatcher = (patch: Partial<WebhookSettings>, workerId = 'test') => {
  const d = new WebhookDispatcher({ db: t.db, log, settings: settings(patch), workerId, pollMs: 50, outbound: t.outbound });
  dispatchers.push(d);
  return d;
};
/** Likewise every receiver. */
const receivers: Receiver[] = [];

describe('webhooks and a receiver in trouble', () => {
  it('a receiver down for a while and back gets every webhook; a duplicate shares its delivery id', async () => {
    const receiver = new Receiver();
    await receiver.up();
    const url = `${receiver.url}/hook`;
    await receiver.down();
    const ids = await finishedLeads(url, 20);
    // The backoff scaled down a hundredfold (0.1 s instead of 10 s): the outage below, six attempts
    // each, stands for one of over half a minute with the defaults.
    const d = dispatcher({ backoffBaseMs: 100, backoffMaxMs: 400, retryForMs: 120_000 });
    d.start();
    d.wake();
    await until('every delivery tried six times while the receiver is down', async () => (await statuses(ids)).every((r) => r.attempts >= 6));
    assert.ok((await statuses(ids)).every((r) => r.status === 'pending'), 'none given up');
    const [waiting] = await deliveries(ids[0]!);
    assert.ok(waiting!.next_attempt_at && !Number.isNaN(Date.parse(waiting!.next_attempt_at)), 'the read API says when the next attempt is due');
    // Back, and half up at first: each webhook's first request is taken in and answered 503, so it is sent again.
    const seen = new Set<string>();
    receiver.answer = (hit) => (seen.has(hit.leadId) ? 200 : (seen.add(hit.leadId), 503));
    await receiver.up();
    await until('every webhook delivered after the outage', () => receiver.delivered().size === ids.length);
    await d.stop();
    await receiver.down();
    console.log(`[figure] after the outage: ${receiver.delivered().size} of ${ids.length} webhooks delivered`);

    for (const id of ids) {
      const hits = receiver.hits.filter((h) => h.leadId === id);
      assert.deepEqual(hits.map((h) => h.status), [503, 200], `lead ${id}: taken twice, the second time answered 200`);
      const [delivery] = await deliveries(id);
      assert.equal(delivery!.status, 'delivered');
      assert.equal(delivery!.next_attempt_at, null);
      assert.deepEqual(new Set(hits.map((h) => h.deliveryId)), new Set([delivery!.id]), 'the duplicate carries the same delivery id');
      assert.ok(hits[1]!.attempt > hits[0]!.attempt && hits[0]!.attempt >= 7, 'the attempt numbers count on across the outage');
      assert.deepEqual(delivery!.attempt_log.map((a) => a.attempt), Array.from({ length: delivery!.attempts }, (_, i) => i + 1));
      assert.ok(delivery!.attempt_log.slice(0, 6).every((a) => a.status_code === null && a.error !== null), 'the refused attempts are logged');
    }
  });

  it('a receiver that never answers holds up no one else', async () => {
    const dead = new Receiver(() => 'hold');
    const healthy = new Receiver();
    await dead.up();
    await healthy.up();
    // A timeout longer than the test: the dead receiver's requests stay open throughout.
    const d = dispatcher({ timeoutMs: 60_000, hostConcurrency: 2, retryForMs: 0 });
    const prompt = await pushLeads(`${healthy.url}/hook`, 10);
    d.start();
    const stuck = await finishedLeads(`${dead.url}/hook`, 3);
    d.wake();
    await until('the dead receiver holds requests', () => dead.held >= 2);
    const started = performance.now();
    await finishLeads(prompt);
    d.wake();
    await until('the healthy receiver got its ten webhooks', () => healthy.delivered().size === prompt.length);
    const tookMs = performance.now() - started;
    console.log(`[figure] ten deliveries to a healthy receiver beside a dead one: ${Math.round(tookMs)} ms from queueing`);
    await until('the ten recorded as delivered', async () => (await statuses(prompt)).every((r) => r.status === 'delivered'));
    // Meanwhile the dead receiver still holds its requests, unanswered: none of its deliveries settled.
    assert.ok((await statuses(stuck)).every((r) => r.status === 'pending'), "the dead receiver's deliveries are still pending");
    assert.equal(dead.held, 2, 'the dead receiver still holds two requests, unanswered');
    await dead.down(); // its held requests fail now, and the connections are refused from here on
    await until("the dead receiver's deliveries failed", async () => (await statuses(stuck)).every((r) => r.status === 'failed'));
    await d.stop();
    await healthy.down();
    assert.equal(dead.maxHeld, 2, 'never more than two at once at one receiver');
  });

  it('a redelivery by hand keeps the delivery id, also when sent again from the copy', async () => {
    const receiver = new Receiver();
    await receiver.up();
    const [id] = await finishedLeads(`${receiver.url}/hook`, 1);
    const d = dispatcher({});
    await d.runOnce();
    const [first] = await deliveries(id!);
    const again = await w.reseller1.post(`/leads/${id}/webhooks/${first!.id}/redeliver`);
    assert.equal(again.status, 200, JSON.stringify(again.body));
    assert.notEqual(again.body.id, first!.id);
    await d.runOnce();
    const third = await w.reseller1.post(`/leads/${id}/webhooks/${again.body.id}/redeliver`);
    assert.equal(third.status, 200);
    await d.runOnce();
    await receiver.down();
    assert.deepEqual(receiver.hits.map((h) => [h.deliveryId, h.status]), [[first!.id, 200], [first!.id, 200], [first!.id, 200]]);
    assert.deepEqual((await deliveries(id!)).map((x) => [x.status, x.redelivery_of]), [['delivered', null], ['delivered', first!.id], ['delivered', again.body.id]]);
  });

  // A worker process of its own needs a database that two processes share: on PGlite (one process)
  // the takeover is proved by a dispatcher whose lease lapses (webhooks.test.ts), so this case runs
  // in the PostgreSQL pass only rather than being reported as skipped.
  if (testBackend() === 'postgres') it('a worker killed mid-delivery is taken over by another, with the next attempt number', async () => {
    const receiver = new Receiver((hit) => (hit.attempt === 1 ? 'hold' : 200));
    await receiver.up();
    let child: ChildProcess | undefined;
    try {
      const [id] = await finishedLeads(`${receiver.url}/hook`, 1);
      // A 3 s attempt timeout and a 1 s margin: the worker's lease on an attempt is 4 s.
      child = spawn(process.execPath, ['--import', 'tsx', 'test/helpers/webhook-worker-process.ts'], {
        env: { ...process.env, DATABASE_URL: (t.db as { url?: string }).url, WORKER_ID: 'doomed', DIALER_WEBHOOK_TIMEOUT_MS: '3000', LEASE_MARGIN_MS: '1000' },
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      await until('the worker holds attempt 1', () => receiver.held === 1);
      child.kill('SIGKILL');
      const killedAt = performance.now();
      const survivor = dispatcher({ timeoutMs: 3000 }, 'survivor');
      survivor.start();
      await until('the other dispatcher delivered it', () => receiver.delivered().size === 1);
      console.log(`[figure] taken over ${Math.round(performance.now() - killedAt)} ms after the kill (attempt lease 4 s)`);
      await survivor.stop();
      const [delivery] = await deliveries(id!);
      assert.deepEqual(receiver.hits.map((h) => [h.deliveryId, h.attempt, h.status]), [[delivery!.id, 1, 'held'], [delivery!.id, 2, 200]]);
      assert.equal(delivery!.status, 'delivered');
      assert.deepEqual(delivery!.attempt_log.map((a) => [a.attempt, a.status_code]), [[1, null], [2, 200]]);
      assert.match(delivery!.attempt_log[0]!.error ?? '', /worker stopped/);
    } finally {
      child?.kill('SIGKILL');
      await receiver.down();
    }
  });
});
