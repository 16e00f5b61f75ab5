/**
 * npm run bench:campaign: a campaign on the default `npm start` deployment (`dialer serve` on the
 * embedded database, role all, its call slots (DIALER_MAX_CONCURRENT_CALLS) raised to the campaign's
 * cap, the sandbox line: the provider emulator in the process, the greeter
 * agent, simulated callees who answer, hear the greeting, say a line and hang up: about 3 s). LEADS (default 100,000) leads are imported into a paused campaign
 * with max_concurrent_calls CAP (100) and max_calls_per_second RATE (20) over POST /leads/batch
 * (1,000 a request, 4 at once); then it runs for MINUTES (default 3) and is stopped (it need not
 * call them all). Measured:
 * - import: leads/s over the whole import;
 * - pace: call starts (in_progress + finished of its progress) over each minute of the run (or
 *   the whole run when shorter), the largest error against RATE;
 * - cap: samples every 250 ms of the campaign's live_calls above CAP;
 * - pause-to-quiet: PAUSES (default 5) times, the campaign is paused and watched for 3 s: the time
 *   from the pause's answer to the last call start seen (0 when none), p99;
 * - late frames: trace_scores of the finished calls (as bench:embedded counts them), the larger of
 *   the caller-audio and agent-audio shares.
 * - the import's floor: the same batches written by one INSERT each straight into the same PGlite
 *   once Dialer has stopped (its triggers and indexes, nothing else), and Dialer's ratio to it.
 * Last line: `campaign: import N leads/s, pace error P%, cap exceeded C times, pause-to-quiet Q ms
 * p99, live-call late frames L%`. Method and figures: docs/benchmarks.md.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { migrate, openDatabase } from '../src/db/index.js';
import { freePort } from '../test/helpers/net.js';
import { percentileOf, serveDialer } from './lib/serve.js';

const LEADS = Number(process.env.LEADS ?? 100_000);
const MINUTES = Number(process.env.MINUTES ?? 3);
const CAP = Number(process.env.CAP ?? 100);
const RATE = Number(process.env.RATE ?? 20);
const PAUSES = Number(process.env.PAUSES ?? 5);
const BATCH = 1000;

const load = () => os.loadavg().map((l) => l.toFixed(2)).join(' ');
const out = (line: string) => process.stdout.write(`${line}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'dialer-bench-campaign-'));

// Short simulated calls (about 3 s): every callee answers, hears the greeting out, says a line
// and hangs up. At RATE starts a second that keeps some RATE x 3 calls live.
const scenarios = path.join(dataDir, 'callees.json');
fs.writeFileSync(
  scenarios,
  JSON.stringify({ '*': { kind: 'script', script: { answer: 'answer', ringMs: 200, maxSeconds: 20, steps: [{ waitForSpeech: { speakingMs: 1000, timeoutMs: 5000 } }, { say: 'Not now, thanks.' }, { hangup: true }] } } }),
);
const port = await freePort();
const dialer = await serveDialer({
  connections: 8,
  ...(process.env.BENCH_CPU_PROF ? { nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] } : {}),
  env: {
    ...process.env,
    PORT: String(port),
    DIALER_DATA_DIR: dataDir,
    DATABASE_URL: '',
    DIALER_SANDBOX: 'true',
    DIALER_SANDBOX_SCENARIOS: scenarios,
    // The worker's call slots (default 50) sized to the campaign's cap: the cap, not the worker, limits the run.
    DIALER_MAX_CONCURRENT_CALLS: String(Math.max(CAP, 50)),
    DIALER_AGENT: 'greeter',
    DIALER_ADMIN_EMAIL: 'bench@example.com',
    DIALER_ADMIN_PASSWORD: 'bench-password',
    DIALER_JWT_SECRET: 'bench-campaign-secret-bench-campaign-secret',
    TWILIO_ACCOUNT_SID: '',
    TWILIO_AUTH_TOKEN: '',
    LOG_LEVEL: 'warn',
  },
});
const stopAll = async () => {
  await dialer.stop();
  fs.rmSync(dataDir, { recursive: true, force: true });
};
process.once('SIGINT', () => void stopAll().then(() => process.exit(130)));

out(`bench:campaign: PGlite in ${dataDir}, sandbox line, ${LEADS} leads, cap ${CAP}, rate ${RATE}/s, ${MINUTES} min; ${os.cpus().length} CPUs; load average ${load()}`);
const token = (await dialer.call('POST', '/login', { email: 'bench@example.com', password: 'bench-password' })).body.access_token as string;
const api = async (method: 'GET' | 'POST', p: string, body?: unknown) => {
  const res = await dialer.call(method, p, body, token);
  if (res.status >= 400) throw new Error(`${method} ${p}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
};
const reseller = (await api('POST', '/resellers', { name: 'Bench' })).id as string;
const flow = { initial_node: 'a', nodes: [{ node_name: 'a', task_messages: [{ role: 'system', content: 'Greet the customer.' }] }] };
const tpl = await api('POST', '/templates', { name: 'campaign', reseller_id: reseller, flow });
await api('POST', '/configurations', { reseller_id: reseller, template: tpl.id, calling_provider: 'PROVIDER_A', call_start_time: '00:00', call_end_time: '00:00', max_retry: 0 });
// Caller IDs enough for the cap (the sandbox line dials any of the provider's numbers).
for (let i = 0; i < CAP + 10; i++) await api('POST', '/numbers', { phone_number: `+1212555${String(1000 + i)}`, provider: 'PROVIDER_A' });
const campaign = (await api('POST', '/campaigns', { name: 'bench', reseller_id: reseller, template: 'campaign', max_concurrent_calls: CAP, max_calls_per_second: RATE })).id as string;
await api('POST', `/campaigns/${campaign}/pause`);

// 1. Import, into the paused campaign.
const importStart = performance.now();
let next = 0;
await Promise.all(
  Array.from({ length: 4 }, async () => {
    for (;;) {
      const from = next;
      next += BATCH;
      if (from >= LEADS) return;
      const leads = Array.from({ length: Math.min(BATCH, LEADS - from) }, (_, k) => ({
        request_id: `b-${from + k}`, template: 'campaign', reseller_id: reseller, campaign_id: campaign,
        payload: { customer_mobile_number: `+1646${String(5000000 + from + k)}`, customer_name: 'Ada' },
      }));
      const res = await api('POST', '/leads/batch', { leads });
      if (res.queued !== leads.length) throw new Error(JSON.stringify(res.results.find((r: { status: number }) => r.status !== 201)));
    }
  }),
);
const importRate = LEADS / ((performance.now() - importStart) / 1000);
out(`import: ${LEADS} leads in ${((performance.now() - importStart) / 1000).toFixed(1)} s, ${Math.round(importRate)} leads/s; load ${load()}`);

// 2. The run: starts per minute against the rate, live calls against the cap.
const progress = async () => (await api('GET', `/campaigns/${campaign}`)).progress as { in_progress: number; finished: number; live_calls: number };
const started = (p: { in_progress: number; finished: number }) => p.in_progress + p.finished;
await api('POST', `/campaigns/${campaign}/resume`);
const runStart = performance.now();
const windowMs = Math.min(60_000, MINUTES * 60_000);
let capExceeded = 0;
let samples = 0;
const windows: number[] = [];
let windowStart = { at: runStart, started: started(await progress()) };
while (performance.now() - runStart < MINUTES * 60_000) {
  await sleep(250);
  const p = await progress();
  samples++;
  if (p.live_calls > CAP) capExceeded++;
  const now = performance.now();
  if (now - windowStart.at >= windowMs) {
    const rate = (started(p) - windowStart.started) / ((now - windowStart.at) / 1000);
    windows.push(rate);
    out(`  window ${windows.length}: ${rate.toFixed(2)} starts/s, ${p.live_calls} live; load ${load()}`);
    windowStart = { at: now, started: started(p) };
  }
}
const paceError = Math.max(...windows.map((r) => Math.abs(r - RATE) / RATE)) * 100;

// 3. Pause to quiet.
const quiet: number[] = [];
for (let i = 0; i < PAUSES; i++) {
  await api('POST', `/campaigns/${campaign}/pause`);
  const pausedAt = performance.now();
  let last = started(await progress());
  let lastStartMs = 0;
  while (performance.now() - pausedAt < 3000) {
    await sleep(20);
    const s = started(await progress());
    if (s > last) lastStartMs = performance.now() - pausedAt;
    last = s;
  }
  quiet.push(lastStartMs);
  await api('POST', `/campaigns/${campaign}/resume`);
  await sleep(3000);
}
await api('POST', `/campaigns/${campaign}/stop`);

// 4. Late frames of the calls that finished.
const totals = { frames: 0, late: 0, outFrames: 0, outLate: 0, calls: 0 };
// The calls still live when it stopped end normally: their figures are written as they end.
for (let waited = 0; (await progress()).in_progress > 0 && waited < 60_000; waited += 500) await sleep(500);
let dialledLeft = true;
for (let page = 1; page <= 20 && dialledLeft; page++) {
  const rows = (await api('GET', `/leads?template=campaign&status=FINISHED&sort=attempt_count&order=desc&page_size=1000&page=${page}`)).data as { attempt_count: number; trace_scores?: Record<string, number> }[];
  for (const lead of rows) {
    if (lead.attempt_count === 0) {
      dialledLeft = false;
      break;
    }
    totals.calls++;
    totals.frames += lead.trace_scores?.media_frames ?? 0;
    totals.late += lead.trace_scores?.media_frames_late ?? 0;
    totals.outFrames += lead.trace_scores?.output_frames ?? 0;
    totals.outLate += lead.trace_scores?.output_frames_late ?? 0;
  }
  if (rows.length < 1000) break;
}
const share = (late: number, n: number) => (n ? late / n : 0);
// No frames counted (the calls' trace_scores carry none): said so, not reported as 0 %.
const latePct = totals.frames + totals.outFrames === 0 ? 'n/a (no frames counted) ' : `${(Math.max(share(totals.late, totals.frames), share(totals.outLate, totals.outFrames)) * 100).toFixed(2)}`;
out(`run: ${samples} samples, ${totals.calls} calls measured (${totals.frames} caller frames, ${totals.outFrames} agent frames); pause-to-quiet ${quiet.map((q) => Math.round(q)).join(', ')} ms; load ${load()}`);
// 5. The import's floor, beside it: the same batches of campaign leads written by one INSERT each
// straight into the same PGlite (the triggers and indexes Dialer's writes meet, nothing else).
await dialer.stop();
const FLOOR_LEADS = Math.min(LEADS, 20_000);
const db = await openDatabase({ databaseUrl: undefined, dataDir });
await migrate(db);
const floorStart = performance.now();
for (let from = 0; from < FLOOR_LEADS; from += BATCH) {
  const rows = Array.from({ length: Math.min(BATCH, FLOOR_LEADS - from) }, (_, k) => ({
    request_id: `f-${from + k}`, payload: { customer_mobile_number: `+1718${String(5000000 + from + k)}`, customer_name: 'Ada' },
  }));
  await db.query(
    `INSERT INTO leads (id, reseller_id, template_id, template_name, request_id, payload, next_attempt_at, campaign_id)
     SELECT gen_random_uuid()::text, $1, $2, 'campaign', x.request_id, x.payload, now(), $3
     FROM jsonb_to_recordset($4::jsonb) AS x (request_id text, payload jsonb)`,
    [reseller, tpl.id, campaign, JSON.stringify(rows)],
  );
}
const floorRate = FLOOR_LEADS / ((performance.now() - floorStart) / 1000);
await db.close();
out(`import floor: ${FLOOR_LEADS} leads by one INSERT per ${BATCH} into the same PGlite, ${Math.round(floorRate)} leads/s; Dialer / floor ${(importRate / floorRate).toFixed(2)}; load ${load()}`);
if (!process.env.BENCH_KEEP) fs.rmSync(dataDir, { recursive: true, force: true });
else out(`kept ${dataDir}`);
out(
  `campaign: import ${Math.round(importRate)} leads/s, pace error ${paceError.toFixed(1)}%, cap exceeded ${capExceeded} times, pause-to-quiet ${Math.round(percentileOf(quiet, 99))} ms p99, live-call late frames ${latePct}%`,
);
