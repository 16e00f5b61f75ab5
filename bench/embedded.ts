/**
 * npm run bench:embedded: the default deployment, `dialer serve` on embedded PGlite (role all:
 * API, scheduler and calls in one process), nothing pinned, everything on this machine.
 *
 * 1. push: single POST /leads at concurrency 50 over real HTTP (PUSHES, default 5,000, after 500
 *    to warm up): leads/s and the latency of each push (p50, p99, max); against a raw single-row
 *    INSERT loop into the same table of the same PGlite (the same data directory, opened by this
 *    process while Dialer is stopped, through the same thread bridge) at the same concurrency.
 * 2. calls during an import: CALLS (default 20) live calls through the provider emulator (Twilio's
 *    protocols, the full voice pipeline with local AI servers: bench/voice-far.ts, in a process of
 *    its own) while `dialer leads import` sends IMPORT_ROWS (default 100,000) rows of a CSV. Calls
 *    that end are replaced until the import is over, so CALLS are live throughout. Late frames
 *    (trace_scores of each call, as bench:voice counts them): agent audio handed to the media
 *    socket after the audio before it had played (out), caller audio handled more than a frame
 *    plus 20 ms after its time (in).
 *
 * The imported and pushed leads belong to a configuration with calling disabled: they are queued
 * and held, not dialled. Last line:
 * `embedded: push N leads/s p99 L ms (ratio R to raw), calls during import late X%`
 * with X the larger of the in and out shares. Method and figures: docs/database.md.
 */
import { fork, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { migrate, openDatabase } from '../src/db/index.js';
import { freePort } from '../test/helpers/net.js';
import { cpuDuring } from './lib/cpu.js';
import { concurrently, percentileOf, serveDialer, type ServedDialer } from './lib/serve.js';
import { confirmingCallee, CONFIRM_FLOW } from './lib/voice-call.js';
import type { FarReply, FarRequest } from './voice-far.js';

const PUSHES = Number(process.env.PUSHES ?? 5000);
const IMPORT_ROWS = Number(process.env.IMPORT_ROWS ?? 100_000);
const CALLS = Number(process.env.CALLS ?? 20);
const CONCURRENCY = 50;
const TWILIO = { accountSid: 'AC00000000000000000000000000000035', authToken: 'bench-embedded-token' };

const load = () => os.loadavg().map((l) => l.toFixed(2)).join(' ');
const out = (line: string) => process.stdout.write(`${line}\n`);
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'dialer-bench-embedded-'));
const children: ChildProcess[] = [];
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    for (const c of children) c.kill('SIGKILL');
    fs.rmSync(dataDir, { recursive: true, force: true });
    process.exit(130);
  });
}

// The far side: emulator and AI servers, in their own process.
const far: ChildProcess = fork(path.join(import.meta.dirname, 'voice-far.ts'), [], { execArgv: ['--import', 'tsx'], env: { ...process.env, BENCH_TWILIO: JSON.stringify(TWILIO) } });
children.push(far);
const farSend = (m: FarRequest) => far.send(m);
const farReply = <T extends FarReply['type']>(type: T) =>
  new Promise<Extract<FarReply, { type: T }>>((resolve, reject) => {
    const onMessage = (m: FarReply) => {
      if (m.type !== type) return;
      far.off('message', onMessage);
      resolve(m as Extract<FarReply, { type: T }>);
    };
    far.on('message', onMessage);
    far.once('exit', (code) => reject(new Error(`the far side exited (${code})`)));
  });
const { emulatorUrl, aiUrl } = await farReply('ready');

const port = await freePort();
const start = async (): Promise<ServedDialer> => {
  const dialer = await serveDialer({
    connections: CONCURRENCY,
    // DIALER_NODE_ARGS='--cpu-prof --cpu-prof-dir=/tmp/prof': Node options for the service (to profile it).
    nodeArgs: (process.env.DIALER_NODE_ARGS ?? '').split(' ').filter(Boolean),
    env: {
      ...process.env,
      PORT: String(port),
      DIALER_DATA_DIR: dataDir,
      DATABASE_URL: '',
      DIALER_ADMIN_EMAIL: 'bench@example.com',
      DIALER_ADMIN_PASSWORD: 'bench-password',
      DIALER_JWT_SECRET: 'bench-embedded-secret-bench-embedded-secret',
      LLM_BASE_URL: aiUrl,
      STT_BASE_URL: aiUrl,
      TTS_BASE_URL: aiUrl,
      TWILIO_ACCOUNT_SID: TWILIO.accountSid,
      TWILIO_AUTH_TOKEN: TWILIO.authToken,
      TWILIO_API_URL: emulatorUrl,
    },
  });
  children.push(dialer.child);
  return dialer;
};

out(`bench:embedded: PGlite in ${dataDir}, role all, ${os.cpus().length} CPUs (nothing pinned); load average ${load()}`);
let dialer = await start();
const token = (await dialer.call('POST', '/login', { email: 'bench@example.com', password: 'bench-password' })).body.access_token as string;
const api = (method: 'GET' | 'POST', p: string, body?: unknown) => dialer.call(method, p, body, token);
const reseller = (await api('POST', '/resellers', { name: 'Bench' })).body.id as string;
const flow = CONFIRM_FLOW;
const templateIds: Record<string, string> = {};
for (const [name, enable_calling] of [['calls', true], ['held', false]] as const) {
  const tpl = await api('POST', '/templates', { name, reseller_id: reseller, flow });
  templateIds[name] = tpl.body.id;
  const cfg = await api('POST', '/configurations', { reseller_id: reseller, template: tpl.body.id, calling_provider: 'PROVIDER_A', call_start_time: '00:00', call_end_time: '00:00', enable_calling });
  if (cfg.status !== 200) throw new Error(JSON.stringify(cfg.body));
}
for (let i = 0; i < CALLS * 2; i++) await api('POST', '/numbers', { phone_number: `+1212555${String(1000 + i)}`, provider: 'PROVIDER_A' });

// 1. Pushes, then the raw INSERT loop on the same PGlite.
const pushBody = (i: number) => ({ request_id: `p-${i}`, template: 'held', reseller_id: reseller, payload: { customer_mobile_number: `+1646${String(5000000 + i)}`, customer_name: 'Ada' } });
await concurrently(500, CONCURRENCY, async (i) => void (await api('POST', '/leads', pushBody(-1 - i))));
const push = await cpuDuring({ service: () => [dialer.child.pid!], client: () => [process.pid] }, () =>
  concurrently(PUSHES, CONCURRENCY, async (i) => {
    const res = await api('POST', '/leads', pushBody(i));
    if (res.status !== 201) throw new Error(JSON.stringify(res.body));
  }),
);
await dialer.stop();
children.splice(children.indexOf(dialer.child), 1);

const db = await openDatabase({ databaseUrl: undefined, dataDir });
await migrate(db);
const insert = (i: number) =>
  db.query(
    `INSERT INTO leads (id, reseller_id, template_id, template_name, request_id, payload, next_attempt_at)
     VALUES (gen_random_uuid()::text, $1, $2, 'held', $3, $4, now())`,
    [reseller, templateIds.held, `raw-${i}`, JSON.stringify(pushBody(i).payload)],
  );
await concurrently(500, CONCURRENCY, async (i) => void (await insert(-1 - i)));
const raw = await cpuDuring({ client: () => [process.pid] }, () => concurrently(PUSHES, CONCURRENCY, async (i) => void (await insert(i))));
await db.close();

const ms = (v: number) => (v < 10 ? v.toFixed(1) : v.toFixed(0));
const latencies = (l: number[]) => `p50 ${ms(percentileOf(l, 50))} ms, p99 ${ms(percentileOf(l, 99))} ms, max ${ms(Math.max(...l))} ms`;
const pushRate = push.result.rate;
const pushP99 = percentileOf(push.result.latenciesMs, 99);
const ratio = pushRate / raw.result.rate;
out(`push: dialer ${Math.round(pushRate)} leads/s (${latencies(push.result.latenciesMs)}); raw insert ${Math.round(raw.result.rate)} rows/s (${latencies(raw.result.latenciesMs)}); ratio ${ratio.toFixed(2)}; load ${load()}`);
out(`  CPU per push (µs): service ${Math.round((push.cpu.service! / PUSHES) * 1e6)}, load generator ${Math.round((push.cpu.client! / PUSHES) * 1e6)}; per raw insert (this process, PGlite's thread included) ${Math.round((raw.cpu.client! / PUSHES) * 1e6)}`);

// 2. Live calls while `dialer leads import` sends the CSV.
dialer = await start();
const csv = path.join(dataDir, 'import.csv');
fs.writeFileSync(csv, `customer_mobile_number,customer_name,campaign,language,region\n${Array.from({ length: IMPORT_ROWS }, (_, i) => `+1718${String(2000000 + i)},Lead ${i},${['renewal', 'winback', 'upsell'][i % 3]},${['en', 'es'][i % 2]},r${i % 7}`).join('\n')}\n`);
let calleeSeq = 0;
const callLeads: string[] = [];
const dial = async (n: number) => {
  const leads = Array.from({ length: n }, () => {
    const callee = `+1415${String(6000000 + ++calleeSeq)}`;
    farSend({ type: 'script', callee, script: confirmingCallee(300) });
    return { request_id: `call-${calleeSeq}`, template: 'calls', reseller_id: reseller, payload: { customer_mobile_number: callee } };
  });
  const res = await api('POST', '/leads/batch', { leads });
  for (const r of res.body.results) callLeads.push(r.result.lead_call_tracker_id);
};
const live = async () => {
  const count = async (status: string) => (await api('GET', `/leads?status=${status}&template=calls&page_size=1`)).body.total as number;
  return (await count('PROCESSING')) + (await count('BACKLOG'));
};
farSend({ type: 'measure' });
await dial(CALLS);
while ((await live()) > 0 && (await api('GET', '/leads?status=PROCESSING&template=calls&page_size=1')).body.total < CALLS) await new Promise((r) => setTimeout(r, 200));
const importStarted = performance.now();
const importer = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'leads', 'import', csv, '--template', 'held', '--reseller-id', reseller, '--url', dialer.url, '--token', token], { stdio: ['ignore', 'pipe', 'inherit'] });
children.push(importer);
let importOutput = '';
importer.stdout!.on('data', (d: Buffer) => (importOutput += d));
const imported = new Promise<number>((resolve) => importer.once('exit', (code) => resolve(code ?? 1)));
let importDone = false;
void imported.then(() => (importDone = true));
// Keep CALLS live until the import is over.
while (!importDone) {
  await new Promise((r) => setTimeout(r, 500));
  const missing = CALLS - (await live());
  if (missing > 0 && !importDone) await dial(missing);
}
const importSeconds = (performance.now() - importStarted) / 1000;
if ((await imported) !== 0) throw new Error(`dialer leads import failed: ${importOutput}`);
const loadDuringImport = load();
for (let i = 0; (await live()) > 0; i++) {
  if (i > 600) throw new Error('the calls did not end within 2 minutes of the import');
  await new Promise((r) => setTimeout(r, 200));
}
const farStatsReply = farReply('measured');
farSend({ type: 'stats' });
const farStats = await farStatsReply;
const totals = { confirmed: 0, frames: 0, late: 0, outFrames: 0, outLate: 0 };
for (const id of callLeads) {
  const lead = (await api('GET', `/leads/${id}`)).body;
  if (lead.status === 'FINISHED' && lead.outcome === 'confirmed') totals.confirmed++;
  totals.frames += lead.trace_scores?.media_frames ?? 0;
  totals.late += lead.trace_scores?.media_frames_late ?? 0;
  totals.outFrames += lead.trace_scores?.output_frames ?? 0;
  totals.outLate += lead.trace_scores?.output_frames_late ?? 0;
}
await dialer.stop();
farSend({ type: 'close' });
await new Promise((r) => far.once('exit', r));
fs.rmSync(dataDir, { recursive: true, force: true });

const share = (late: number, n: number) => (n ? late / n : 1);
const inShare = share(totals.late, totals.frames);
const outShare = share(totals.outLate, totals.outFrames);
const pct = (s: number) => `${(s * 100).toFixed(2)}%`;
out(
  `import: ${IMPORT_ROWS} rows in ${importSeconds.toFixed(1)} s (${Math.round(IMPORT_ROWS / importSeconds)} rows/s) while ${CALLS} calls were live (${callLeads.length} calls in all, ${totals.confirmed} confirmed); ` +
    `late frames out ${pct(outShare)} of ${totals.outFrames}, in ${pct(inShare)} of ${totals.frames}; the far side sent ${pct(farStats.framesSent ? farStats.framesSentLate / farStats.framesSent : 0)} of its frames late itself; load ${loadDuringImport}`,
);
out(`embedded: push ${Math.round(pushRate)} leads/s p99 ${ms(pushP99)} ms (ratio ${ratio.toFixed(2)} to raw), calls during import late ${(Math.max(inShare, outShare) * 100).toFixed(2)}%`);
process.exit(0);
