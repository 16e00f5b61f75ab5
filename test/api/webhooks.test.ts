/**
 * The reporting webhook against a real local receiver: payloads, headers,
 * signature, attempts, only-2xx, timeouts, recovery after a dead dispatcher, and the read API.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, beforeEach, describe, it } from 'node:test';
import { ConfigError } from '../../src/config.js';
import { pino } from 'pino';
import { createLogger } from '../../src/lib/logger.js';
import { Scheduler } from '../../src/scheduler/index.js';
import { enqueueReportingWebhook, enqueueReportingWebhooks, queueFinishNotifications, signWebhook, verifyWebhookSignature, WebhookDispatcher } from '../../src/webhooks/index.js';
import { webhookSettings, type WebhookSettings } from '../../src/config/webhooks.js';
import { afterFailure } from '../../src/webhooks/schedule.js';
import { LOST_ATTEMPT } from '../../src/webhooks/repository.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { gate, ScriptedDriver } from '../helpers/drivers.js';
import { buildWorld, type World } from '../helpers/world.js';

const SECRET = 'whsec-test-0123456789';
const log = createLogger('silent');
let t: TestApp;
let w: World;
let receiver: http.Server;
let base: string;
interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}
const received: Received[] = [];
/** Status codes the receiver answers, per path, in turn (200 once the list runs out). */
const script = new Map<string, number[]>();

before(async () => {
  t = await buildTestApp();
  w = await buildWorld(t);
  receiver = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      received.push({ path: req.url!, headers: req.headers, body });
      if (req.url === '/slow') return void setTimeout(() => res.writeHead(200).end(), 1500);
      const status = script.get(req.url!)?.shift() ?? 200;
      res.writeHead(status, status === 302 ? { location: '/elsewhere' } : {}).end('ok');
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  const tpl = await w.reseller1.post('/templates', {
    name: 'wh',
    reseller_id: w.r1,
    flow: { initial_node: 'a', nodes: [{ node_name: 'a', task_messages: [{ role: 'system', content: 'Hi' }] }] },
  });
  await w.reseller1.post('/configurations', { reseller_id: w.r1, template: tpl.body.id, calling_provider: 'PROVIDER_A', call_start_time: '00:00', call_end_time: '00:00', max_retry: 0 });
  await t.admin.post('/numbers', { phone_number: '+12125557001', provider: 'PROVIDER_A' });
});
after(async () => {
  receiver.closeAllConnections();
  await new Promise<void>((r) => receiver.close(() => r()));
  await t.close();
});
beforeEach(() => {
  received.length = 0;
});

/** The defaults, signed, with a shorter timeout and (unless a test says otherwise) no retries after the first three attempts. */
const settings = (patch: Partial<WebhookSettings> = {}): WebhookSettings => ({ ...webhookSettings({}), secret: SECRET, timeoutMs: 5000, retryForMs: 0, ...patch });
const dispatcher = (patch: Partial<WebhookSettings> = {}) => new WebhookDispatcher({ db: t.db, log, settings: settings(patch), workerId: 'test', outbound: t.outbound });
let seq = 0;
async function push(path: string | undefined, payload: Record<string, unknown> = {}) {
  const res = await w.reseller1.post('/leads', {
    request_id: `order-${++seq}`,
    template: 'wh',
    reseller_id: w.r1,
    payload: { customer_mobile_number: `+1646555${String(7000 + seq)}`, ...payload },
    ...(path ? { reporting_webhook_url: `${base}${path}` } : {}),
  });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return { id: res.body.lead_call_tracker_id as string, orderId: `order-${seq}` };
}
async function call(driver: ScriptedDriver) {
  await new Scheduler({ db: t.db, drivers: new Map([['PROVIDER_A', driver]]), log, onFinished: async (q, ids) => void (await enqueueReportingWebhooks(q, ids)) }).drain();
}
/** Finishes a pushed lead with SQL, as the scheduler would, and queues its webhook in that transaction. */
async function finish(id: string, set: string, params: unknown[] = []) {
  return t.db.tx(async (q) => {
    await q.query(`UPDATE leads SET status = 'FINISHED', ${set} WHERE id = $1`, [id, ...params]);
    return enqueueReportingWebhook(q, id);
  });
}
async function until(check: () => boolean | Promise<boolean>) {
  while (!(await check())) await new Promise((r) => setTimeout(r, 20));
}
const pick = ({ backoffBaseMs, backoffMaxMs, concurrency, hostConcurrency }: WebhookSettings) => ({ backoffBaseMs, backoffMaxMs, concurrency, hostConcurrency });
const deliveries = async (id: string) => (await w.reseller1.get(`/leads/${id}/webhooks`)).body;

describe('reporting webhook', () => {
  it('sends the success payload, signed, when a conversation ends', async () => {
    const { id, orderId } = await push('/ok');
    const transcription = [{ role: 'assistant', content: 'Hello' }, { role: 'user', content: 'Yes' }];
    await call(new ScriptedDriver('PROVIDER_A', () => ({ kind: 'completed', outcome: 'confirmed', durationSeconds: 12, metaData: { transcription }, recordingUrl: 'https://rec.example/1.wav' })));
    assert.equal(await dispatcher().runOnce(), 1);
    assert.equal(received.length, 1);
    const r = received[0]!;
    assert.equal(r.headers['content-type'], 'application/json');
    assert.equal(r.headers['user-agent'], 'Dialer/0.1.0');
    assert.ok(verifyWebhookSignature(SECRET, r.headers['x-dialer-signature'] as string, r.body));
    assert.ok(!verifyWebhookSignature('another-secret-xyz', r.headers['x-dialer-signature'] as string, r.body));
    const body = JSON.parse(r.body);
    const lead = (await w.reseller1.get(`/leads/${id}`)).body;
    assert.deepEqual(body, {
      orderId,
      leadId: id,
      callSid: `CA-${id}-1`,
      outcome: 'confirmed',
      status: 'FINISHED',
      attemptCount: 1,
      transcription,
      recordingUrl: 'https://rec.example/1.wav',
      completedAt: lead.call_end_time,
    });
    const d = await deliveries(id);
    assert.equal(d.data[0].status, 'delivered');
    assert.equal(d.data[0].kind, 'success');
    assert.equal(d.data[0].attempt_log[0].status_code, 200);
  });

  it('sends the failure payload when the call fails, unsigned without a secret', async () => {
    const { id, orderId } = await push('/ok');
    await call(new ScriptedDriver('PROVIDER_A', () => ({ kind: 'busy', error: 'SIP 486' })));
    await dispatcher({ secret: undefined }).runOnce();
    const r = received[0]!;
    assert.equal(r.headers['x-dialer-signature'], undefined);
    assert.deepEqual(JSON.parse(r.body), { orderId, leadId: id, outcome: 'busy', attemptCount: 1, failureReason: 'The line was busy: SIP 486' });
  });

  it('makes up to 3 attempts back-to-back on errors and records each; only 2xx counts', async () => {
    script.set('/down', [500, 503, 502]);
    const a = await push('/down');
    script.set('/flaky', [500]);
    const b = await push('/flaky');
    script.set('/moved', [302, 404, 301]);
    const c = await push('/moved');
    await call(new ScriptedDriver('PROVIDER_A'));
    assert.equal(await dispatcher().runOnce(), 3);
    const da = (await deliveries(a.id)).data[0];
    assert.equal(da.status, 'failed');
    assert.equal(da.attempts, 3);
    assert.deepEqual(da.attempt_log.map((x: any) => x.status_code), [500, 503, 502]);
    assert.match(da.attempt_log[0].error, /answered 500/);
    const db = (await deliveries(b.id)).data[0];
    assert.equal(db.status, 'delivered');
    assert.deepEqual(db.attempt_log.map((x: any) => x.status_code), [500, 200]);
    assert.equal(received.filter((r) => r.path === '/flaky').length, 2, 'a 2xx stops the retries');
    const down = received.filter((r) => r.path === '/down');
    assert.equal(down.length, 3);
    assert.deepEqual(down.map((r) => r.headers['x-dialer-attempt']), ['1', '2', '3']);
    assert.equal(new Set(down.map((r) => r.headers['x-dialer-delivery-id'])).size, 1, 'one delivery id for every attempt');
    const dc = (await deliveries(c.id)).data[0];
    assert.equal(dc.status, 'failed', 'redirects are not followed and do not count');
    assert.equal(received.filter((r) => r.path === '/elsewhere').length, 0);
    assert.equal(await dispatcher().runOnce(), 0, 'nothing left to deliver');
  });

  it('records a timeout as a failed attempt', async () => {
    const { id } = await push('/slow');
    await call(new ScriptedDriver('PROVIDER_A'));
    await dispatcher({ attempts: 1, timeoutMs: 200 }).runOnce();
    const d = (await deliveries(id)).data[0];
    assert.equal(d.status, 'failed');
    assert.equal(d.attempt_log[0].status_code, null);
    assert.match(d.attempt_log[0].error, /timed out after 200 ms/);
  });

  it('resumes a delivery whose dispatcher died, with the next attempt number, and logs the lost attempt', async () => {
    const { id } = await push('/ok');
    await call(new ScriptedDriver('PROVIDER_A'));
    // A dispatcher claimed attempt 1 and died before recording its answer.
    await t.db.query(`UPDATE webhook_deliveries SET locked_by = 'dead', locked_until = now() + interval '1 hour', attempts = 1 WHERE lead_id = $1`, [id]);
    assert.equal(await dispatcher().runOnce(), 0, 'its lease still holds');
    await t.db.query(`UPDATE webhook_deliveries SET locked_until = now() - interval '1 second' WHERE lead_id = $1`, [id]);
    assert.equal(await dispatcher().runOnce(), 1);
    const d = (await deliveries(id)).data[0];
    assert.equal(d.status, 'delivered');
    assert.equal(d.attempts, 2);
    assert.deepEqual(d.attempt_log.map((x: any) => [x.attempt, x.status_code, x.error]), [[1, null, LOST_ATTEMPT], [2, 200, null]]);
    // The resumed attempt carries the notification's stable id and its attempt number: a receiver
    // that got attempt 1 before the crash can tell this is the same notification.
    const r = received.at(-1)!;
    assert.equal(r.headers['x-dialer-delivery-id'], d.id);
    assert.equal(r.headers['x-dialer-attempt'], '2');
  });

  it('queues nothing for a lead without a URL, and one failure payload for an aborted lead', async () => {
    const none = await push(undefined);
    await call(new ScriptedDriver('PROVIDER_A'));
    assert.deepEqual((await deliveries(none.id)).data, []);
    const { id, orderId } = await push('/ok');
    await w.reseller1.post('/lead/abort', { leads: [{ lead_id: id, cancellation_reason: 'customer called in' }] });
    await dispatcher().runOnce();
    assert.deepEqual(JSON.parse(received.at(-1)!.body), {
      orderId,
      leadId: id,
      outcome: 'aborted',
      attemptCount: 0,
      failureReason: 'The lead was aborted: customer called in',
    });
  });

  it('queues the webhook in the transaction that finishes the lead, with the exact payloads', async () => {
    const ok = await push('/ok');
    const transcription = [{ role: 'assistant', content: 'Hi' }];
    assert.equal(
      await finish(ok.id, `outcome = 'interested', attempt_count = 2, call_id = 'CA-1', recording_url = 'https://rec.example/a.wav',
                           call_end_time = '2026-01-02T03:04:05Z', meta_data = $2::jsonb`, [JSON.stringify({ transcription })]),
      true,
    );
    const failed = await push('/ok');
    await finish(failed.id, `outcome = 'no_answer', attempt_count = 3, meta_data = $2::jsonb`, [JSON.stringify({ errors: [{ message: 'SIP 480' }] })]);
    const bare = await push('/ok');
    await finish(bare.id, `outcome = 'completed', attempt_count = 1`);
    const none = await push(undefined);
    assert.equal(await finish(none.id, `outcome = 'completed'`), false);
    const rolledBack = await push('/ok');
    await assert.rejects(
      t.db.tx(async (q) => {
        await q.query(`UPDATE leads SET status = 'FINISHED', outcome = 'busy' WHERE id = $1`, [rolledBack.id]);
        await enqueueReportingWebhook(q, rolledBack.id);
        throw new Error('the finishing transaction fails');
      }),
    );

    assert.equal(await dispatcher().runOnce(), 3);
    const byLead = new Map(received.map((r) => [JSON.parse(r.body).leadId as string, JSON.parse(r.body)]));
    assert.deepEqual(byLead.get(ok.id), {
      orderId: ok.orderId,
      leadId: ok.id,
      callSid: 'CA-1',
      outcome: 'interested',
      status: 'FINISHED',
      attemptCount: 2,
      transcription,
      recordingUrl: 'https://rec.example/a.wav',
      completedAt: '2026-01-02T03:04:05.000Z',
    });
    assert.deepEqual(byLead.get(failed.id), { orderId: failed.orderId, leadId: failed.id, outcome: 'no_answer', attemptCount: 3, failureReason: 'The callee did not answer: SIP 480' });
    const b = byLead.get(bare.id);
    assert.deepEqual(b.transcription, [], 'no transcription: an empty list');
    assert.equal(b.callSid, null);
    assert.ok(!Number.isNaN(Date.parse(b.completedAt)), 'no call end time: the time of queueing');
    assert.deepEqual((await deliveries(none.id)).data, []);
    assert.deepEqual((await deliveries(rolledBack.id)).data, [], 'a rolled-back finish queues nothing');
    const [d] = (await deliveries(failed.id)).data;
    assert.equal(d.kind, 'failure');
    assert.equal(d.url, `${base}/ok`);
    assert.deepEqual(d.payload, byLead.get(failed.id));
  });

  it('runs in the background: wake() delivers at once, stop() lets the delivery in hand finish', async () => {
    const fast = dispatcher();
    fast.start();
    const a = await push('/ok');
    await finish(a.id, `outcome = 'completed', attempt_count = 1`);
    fast.wake();
    await until(async () => (await deliveries(a.id)).data[0]?.status === 'delivered');
    await fast.stop();

    const slow = dispatcher();
    slow.start();
    const b = await push('/slow');
    await finish(b.id, `outcome = 'busy', attempt_count = 1`);
    slow.wake();
    await until(() => received.some((r) => r.path === '/slow'));
    await slow.stop();
    const [d] = (await deliveries(b.id)).data;
    assert.equal(d.status, 'delivered', 'stop() waited for the answer');
    assert.equal(d.attempts, 1);
    await slow.stop(); // a second stop is harmless
  });

  it('a dispatcher that stalled past its lease changes nothing but its own attempt and its success', async () => {
    const { id } = await push('/slow');
    await finish(id, `outcome = 'busy', attempt_count = 1`);
    const lines: { level: number; msg: string }[] = [];
    const capture = pino({ level: 'warn' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
    const stalled = new WebhookDispatcher({ db: t.db, log: capture, settings: settings(), workerId: 'stalled', outbound: t.outbound });
    const first = stalled.runOnce();
    await until(() => received.some((r) => r.path === '/slow'));
    // Its lease lapses while the receiver is still answering; another dispatcher takes over.
    await t.db.query(`UPDATE webhook_deliveries SET locked_until = now() - interval '1 second' WHERE lead_id = $1`, [id]);
    const second = new WebhookDispatcher({ db: t.db, log: capture, settings: settings(), workerId: 'second', outbound: t.outbound }).runOnce();
    assert.deepEqual(await Promise.all([first, second]), [1, 1]);
    assert.equal(received.filter((r) => r.path === '/slow').length, 2, 'a receiver may see a webhook twice');
    const [d] = (await deliveries(id)).data;
    assert.equal(d.status, 'delivered');
    assert.deepEqual(d.attempt_log.map((x: any) => [x.attempt, x.status_code]), [[1, 200], [2, 200]], 'the takeover made attempt 2; each is logged once');
    assert.deepEqual(new Set(received.filter((r) => r.path === '/slow').map((r) => r.headers['x-dialer-attempt'])), new Set(['1', '2']));
    assert.deepEqual(lines.map((l) => l.msg), ['webhook delivery settled or taken over by another dispatcher; stopping'], 'no error logged');
  });

  it('shows deliveries only inside the caller scope', async () => {
    const { id } = await push('/ok');
    assert.equal((await w.reseller2.get(`/leads/${id}/webhooks`)).status, 404);
    assert.equal((await w.merchant1.get(`/leads/${id}/webhooks`)).status, 404, 'a reseller-level lead is not a merchant lead');
    assert.equal((await w.reseller1.get('/leads/nope/webhooks')).status, 404);
  });

  it('queues the notifications of leads that finish together in one go: a webhook for each lead with a URL, a service callback after each conversation', async () => {
    await call(new ScriptedDriver('PROVIDER_A')); // leads earlier tests left due
    for (let i = 2; i <= 6; i++) await t.admin.post('/numbers', { phone_number: `+1212555700${i}`, provider: 'PROVIDER_A' });
    // The last two calls are not answered (no conversation): one asked for a webhook, one did not.
    const leads = [await push('/together'), await push(undefined), await push('/together'), await push('/together'), await push('/together', { line: 'busy' }), await push(undefined, { line: 'busy' })];
    // Every call waits until all of them are up, so they end in the same moment and finish together.
    const allUp = gate();
    const driver = new ScriptedDriver('PROVIDER_A', async (r) => {
      if (driver.dials.length === leads.length) allUp.open();
      await allUp.wait;
      if (r.payload.line === 'busy') return { kind: 'busy', error: 'SIP 486' };
      return { kind: 'completed', outcome: 'confirmed', durationSeconds: 5, metaData: { call_ended_by: 'agent' } };
    });
    await new Scheduler({ db: t.db, drivers: new Map([['PROVIDER_A', driver]]), log, onFinished: queueFinishNotifications(`${base}/service`) }).drain();
    assert.equal(driver.dials.length, leads.length);
    const kinds = async (id: string) => ((await deliveries(id)).data as Array<{ kind: string; url: string }>).map((d) => `${d.kind} ${d.url.replace(base, '')}`).sort();
    const expected = [
      ['service_callback /service', 'success /together'],
      ['service_callback /service'],
      ['service_callback /service', 'success /together'],
      ['service_callback /service', 'success /together'],
      ['failure /together'],
      [],
    ];
    for (const [i, lead] of leads.entries()) {
      assert.equal((await w.reseller1.get(`/leads/${lead.id}`)).body.status, 'FINISHED', `lead ${i}`);
      assert.deepEqual(await kinds(lead.id), expected[i], `lead ${i}`);
    }
    // Called directly with several leads and with none: the same rows, and nothing for none.
    const again = await t.db.tx(async (q) => [await enqueueReportingWebhooks(q, leads.map((l) => l.id)), await enqueueReportingWebhooks(q, [])]);
    assert.deepEqual(again, [4, 0]);
  });
});

describe('webhook settings and signatures', () => {
  it('reads the environment with defaults and refuses bad values', () => {
    assert.deepEqual(webhookSettings({}), {
      secret: undefined,
      attempts: 3,
      delaysMs: [],
      timeoutMs: 10_000,
      retryForMs: 86_400_000,
      backoffBaseMs: 10_000,
      backoffMaxMs: 3_600_000,
      concurrency: 32,
      hostConcurrency: 4,
    });
    assert.equal(webhookSettings({ DIALER_WEBHOOK_RETRY_FOR_SECONDS: '0' }).retryForMs, 0);
    assert.equal(webhookSettings({ DIALER_WEBHOOK_RETRY_FOR_SECONDS: '3600' }).retryForMs, 3_600_000);
    assert.deepEqual(
      pick(webhookSettings({ DIALER_WEBHOOK_BACKOFF_BASE_MS: '500', DIALER_WEBHOOK_BACKOFF_MAX_MS: '60000', DIALER_WEBHOOK_CONCURRENCY: '8', DIALER_WEBHOOK_HOST_CONCURRENCY: '2' })),
      { backoffBaseMs: 500, backoffMaxMs: 60_000, concurrency: 8, hostConcurrency: 2 },
    );
    assert.equal(webhookSettings({ DIALER_WEBHOOK_CONCURRENCY: '2', DIALER_WEBHOOK_HOST_CONCURRENCY: '5' }).hostConcurrency, 2, 'never more per receiver than in all');
    assert.throws(() => webhookSettings({ DIALER_WEBHOOK_BACKOFF_BASE_MS: '5000', DIALER_WEBHOOK_BACKOFF_MAX_MS: '1000' }), /at least DIALER_WEBHOOK_BACKOFF_BASE_MS/);
    assert.throws(() => webhookSettings({ DIALER_WEBHOOK_RETRY_FOR_SECONDS: '1d' }), /whole number/);
    assert.throws(() => webhookSettings({ DIALER_WEBHOOK_CONCURRENCY: '0' }), /between 1 and 1000/);
    assert.deepEqual(webhookSettings({ DIALER_WEBHOOK_ATTEMPTS: '5', DIALER_WEBHOOK_RETRY_DELAYS_MS: '100, 2000', DIALER_WEBHOOK_SECRET: 'x'.repeat(20) }).delaysMs, [100, 2000]);
    assert.throws(() => webhookSettings({ DIALER_WEBHOOK_ATTEMPTS: '0' }), /between 1 and 10/);
    assert.throws(() => webhookSettings({ DIALER_WEBHOOK_RETRY_DELAYS_MS: '1s' }), /milliseconds/);
    assert.throws(() => webhookSettings({ DIALER_WEBHOOK_SECRET: 'short' }), /at least 16/);
    assert.throws(() => webhookSettings({ DIALER_WEBHOOK_ATTEMPTS: '11' }), /between 1 and 10/);
    assert.throws(() => webhookSettings({ DIALER_WEBHOOK_ATTEMPTS: 'three' }), /whole number/);
    assert.throws(() => webhookSettings({ DIALER_WEBHOOK_TIMEOUT_MS: '-5' }), /DIALER_WEBHOOK_TIMEOUT_MS/);
    assert.throws(() => webhookSettings({ DIALER_WEBHOOK_RETRY_DELAYS_MS: '100,,200' }), /milliseconds/);
    assert.equal(webhookSettings({ DIALER_WEBHOOK_TIMEOUT_MS: '2500' }).timeoutMs, 2500);
    assert.equal(webhookSettings({ DIALER_WEBHOOK_SECRET: SECRET }).secret, SECRET);
    assert.throws(() => webhookSettings({ DIALER_WEBHOOK_ATTEMPTS: '0' }), ConfigError);
  });

  it('backs off after the first attempts, doubling with jitter up to the ceiling, until the retry window closes', () => {
    const s = webhookSettings({ DIALER_WEBHOOK_BACKOFF_BASE_MS: '1000', DIALER_WEBHOOK_BACKOFF_MAX_MS: '8000', DIALER_WEBHOOK_RETRY_FOR_SECONDS: '60' });
    const queued = new Date('2026-01-01T00:00:00Z');
    const at = (seconds: number) => new Date(queued.getTime() + seconds * 1000);
    const low = () => 0;
    const high = () => 1;
    assert.deepEqual(afterFailure(s, 1, queued, at(0), high), { kind: 'retry', delayMs: 0 }, 'the first three go back-to-back');
    assert.deepEqual(afterFailure(s, 2, queued, at(0), high), { kind: 'retry', delayMs: 0 });
    assert.deepEqual([3, 4, 5, 6, 7, 9].map((n) => (afterFailure(s, n, queued, at(1), high) as { delayMs: number }).delayMs), [1000, 2000, 4000, 8000, 8000, 8000]);
    assert.deepEqual([3, 4, 5].map((n) => (afterFailure(s, n, queued, at(1), low) as { delayMs: number }).delayMs), [500, 1000, 2000], 'jitter: at least half');
    assert.deepEqual(afterFailure(s, 9, queued, at(53), high), { kind: 'give_up' }, 'the next try would fall after the window');
    assert.deepEqual(afterFailure(s, 9, queued, at(52), high), { kind: 'retry', delayMs: 8000 });
    assert.deepEqual(afterFailure({ ...s, retryForMs: 0 }, 3, queued, at(0), low), { kind: 'give_up' }, 'no window: three attempts and done');
    assert.deepEqual(afterFailure({ ...s, delaysMs: [100, 250] }, 1, queued, at(0)), { kind: 'retry', delayMs: 100 });
    assert.deepEqual(afterFailure({ ...s, delaysMs: [100, 250] }, 2, queued, at(0)), { kind: 'retry', delayMs: 250 });
  });

  it('verifies signatures within the tolerance only', () => {
    const body = '{"a":1}';
    const now = 1_800_000_000;
    const header = signWebhook(SECRET, now, body);
    assert.ok(verifyWebhookSignature(SECRET, header, body, 300, now + 10));
    assert.ok(!verifyWebhookSignature(SECRET, header, body, 300, now + 301), 'too old');
    assert.ok(!verifyWebhookSignature(SECRET, header, '{"a":2}', 300, now), 'other body');
    assert.ok(!verifyWebhookSignature(SECRET, 'garbage', body, 300, now));
    assert.ok(!verifyWebhookSignature(SECRET, undefined, body));
  });
});
