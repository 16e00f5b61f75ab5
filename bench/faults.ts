/**
 * `npm run experiment:faults`: the fault experiments, end to end against processes: a PostgreSQL
 * server of its own, one `dialer serve --role api`, three `dialer serve --role worker` and the
 * provider emulator (the built-in greeter agent, no AI service). Each experiment says what was lost
 * and what was done twice; the run exits non-zero when anything was.
 *
 *   1. The database goes away while calls are live: 3 leads, PostgreSQL stopped 2.5 s after the
 *      push for 10 s. Each lead must be dialled once and keep its first call's outcome.
 *   2. A webhook receiver is down for 30 s, then back: 20 leads finish meanwhile; every webhook
 *      must arrive, and the copies of one must share its delivery id.
 *   3. A receiver that never answers beside a healthy one: 3 leads report to the first, 10 to the
 *      second; the healthy receiver's deliveries must not wait for the dead one's.
 *   4. A worker killed (SIGKILL) while it delivers a webhook: another worker must take the delivery
 *      over within a minute, its attempt number counting on.
 *
 * Options: --only 1,3 (run some), --keep-logs (the processes' logs stay in the temp folder).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { startOwnPostgres, type OwnPostgres } from '../scripts/provision.js';
import { API_PREFIX } from '../src/app.js';
import { DEMO_CALLEE, startEmulator, type Emulator } from '../src/emulator/index.js';
import { freePort } from '../test/helpers/net.js';

const args = process.argv.slice(2);
const only = args.includes('--only') ? new Set(args[args.indexOf('--only') + 1]!.split(',').map(Number)) : undefined;
const keepLogs = args.includes('--keep-logs');
const TWILIO = { accountSid: 'AC00000000000000000000000000000009', authToken: 'faults-token' };
const ADMIN = { email: 'admin@example.com', password: 'faults-password-1' };
const logDir = fs.mkdtempSync(path.join(os.tmpdir(), 'dialer-faults-'));

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const say = (line: string) => process.stdout.write(`${line}\n`);

async function until<T>(what: string, check: () => Promise<T | undefined | false> | T | undefined | false, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(100);
  }
}

/** A `dialer serve` child process; its output goes to a log file. */
interface Proc {
  name: string;
  child: ChildProcess;
  url: string;
  stop(signal?: NodeJS.Signals): Promise<void>;
}

async function serve(name: string, role: 'api' | 'worker', env: NodeJS.ProcessEnv): Promise<Proc> {
  const port = await freePort();
  const out = fs.openSync(path.join(logDir, `${name}.log`), 'a');
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'serve', '--role', role], {
    env: { ...env, PORT: String(port), HOST: '127.0.0.1', DIALER_PUBLIC_URL: `http://127.0.0.1:${port}` },
    stdio: ['ignore', out, out],
  });
  const url = `http://127.0.0.1:${port}${API_PREFIX}`;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await until(`${name} to serve`, async () => {
    if (child.exitCode !== null) throw new Error(`${name} exited with ${child.exitCode}; see ${logDir}/${name}.log`);
    return fetch(`${url}/health`).then((r) => r.status === 200, () => false);
  }, 5 * 60_000);
  return {
    name,
    child,
    url,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
    },
  };
}

/** A receiver of webhooks whose answer can be switched: up (200), down (port closed) or mute (never answers). */
class Receiver {
  readonly got: Array<{ at: number; deliveryId: string; attempt: number; leadId: string; remotePort: number }> = [];
  private server: http.Server | undefined;
  private sockets = new Set<Socket>();
  mode: 'up' | 'mute' = 'up';
  constructor(readonly port: number) {}
  get url(): string {
    return `http://127.0.0.1:${this.port}/hook`;
  }
  async up(): Promise<void> {
    if (this.server) return;
    const server = http.createServer((req, res) => {
      let raw = '';
      req.on('data', (c) => (raw += c));
      req.on('end', () => {
        let leadId = '';
        try {
          const body = JSON.parse(raw);
          leadId = String(body.leadId ?? '');
        } catch {
          /* not JSON */
        }
        this.got.push({
          at: Date.now(),
          deliveryId: String(req.headers['x-dialer-delivery-id'] ?? ''),
          attempt: Number(req.headers['x-dialer-attempt'] ?? 0),
          leadId,
          remotePort: req.socket.remotePort ?? 0,
        });
        if (this.mode === 'up') res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
      });
    });
    server.on('connection', (s) => {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
    await new Promise<void>((r) => server.listen(this.port, '127.0.0.1', r));
    this.server = server;
  }
  async down(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((r) => server.close(() => r()));
  }
  /** Distinct deliveries seen (by delivery id). */
  deliveries(): Set<string> {
    return new Set(this.got.map((g) => g.deliveryId));
  }
}

/** The process (pid) that holds the TCP connection from `port` on loopback, from `ss`. */
function pidOfLocalPort(port: number): number | undefined {
  const ss = spawnSync('ss', ['-tnpH', `sport = :${port}`], { encoding: 'utf8' });
  const m = /pid=(\d+)/.exec(ss.stdout);
  return m ? Number(m[1]) : undefined;
}

interface Api {
  call(method: string, p: string, body?: unknown): Promise<{ status: number; body: any }>;
}

function api(url: string, token?: string): Api {
  return {
    async call(method, p, body) {
      const res = await fetch(`${url}${p}`, {
        method,
        headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...(token ? { authorization: `Bearer ${token}` } : {}) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const text = await res.text();
      let parsed: unknown = text;
      try {
        parsed = JSON.parse(text);
      } catch {
        /* not JSON */
      }
      return { status: res.status, body: parsed };
    },
  };
}

async function must(what: string, p: Promise<{ status: number; body: any }>): Promise<any> {
  const r = await p;
  if (r.status >= 300) throw new Error(`${what}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

const results: Array<{ n: number; line: string; ok: boolean }> = [];
let pushed = 0;

async function main(): Promise<void> {
  const pg: OwnPostgres = await startOwnPostgres(process.env);
  const apiPort = await freePort();
  let emulator: Emulator | undefined;
  const procs: Proc[] = [];
  const receivers: Receiver[] = [];
  try {
    emulator = await startEmulator({
      dialerUrl: `http://127.0.0.1:${apiPort}${API_PREFIX}`,
      twilio: TWILIO,
      plivo: { authId: 'MAFAULTS', authToken: 'x' },
      exotel: { accountSid: 'x', apiKey: 'x', apiToken: 'x' },
      defaultScript: DEMO_CALLEE,
      recordMedia: false,
    });
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      DATABASE_URL: pg.url,
      DIALER_JWT_SECRET: 'faults-secret-faults-secret-faults-0001',
      DIALER_ADMIN_EMAIL: ADMIN.email,
      DIALER_ADMIN_PASSWORD: ADMIN.password,
      DIALER_SANDBOX: 'false',
      DIALER_AGENT: 'greeter',
      DIALER_OUTBOUND_ALLOW: '127.0.0.0/8',
      DIALER_POLL_MS: '200',
      LOG_LEVEL: 'info',
      TWILIO_ACCOUNT_SID: TWILIO.accountSid,
      TWILIO_AUTH_TOKEN: TWILIO.authToken,
      TWILIO_API_URL: emulator.url,
      // The backoff after a webhook's three back-to-back attempts starts at a second here (10 s by
      // default), so that a 30 s outage is seen through in one run.
      DIALER_WEBHOOK_BACKOFF_BASE_MS: '1000',
      DIALER_WEBHOOK_BACKOFF_MAX_MS: '5000',
      DIALER_WEBHOOK_TIMEOUT_MS: '10000',
    };
    // The API process first (it migrates), then the workers.
    const apiProc = await (async () => {
      const out = fs.openSync(path.join(logDir, 'api.log'), 'a');
      const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'serve', '--role', 'api'], {
        env: { ...env, PORT: String(apiPort), HOST: '127.0.0.1' },
        stdio: ['ignore', out, out],
      });
      const url = `http://127.0.0.1:${apiPort}${API_PREFIX}`;
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      await until('the API to serve', async () => {
        if (child.exitCode !== null) throw new Error(`the API exited; see ${logDir}/api.log`);
        return fetch(`${url}/health`).then((r) => r.status === 200, () => false);
      }, 5 * 60_000);
      return { name: 'api', child, url, stop: async () => (child.kill('SIGTERM'), exited) } satisfies Proc;
    })();
    procs.push(apiProc);
    for (let i = 1; i <= 3; i++) procs.push(await serve(`worker-${i}`, 'worker', env));
    const login = await must('login', api(apiProc.url).call('POST', '/login', ADMIN));
    const admin = api(apiProc.url, login.access_token);
    const reseller = (await must('reseller', admin.call('POST', '/resellers', { name: 'Faults' }))).id as string;
    const flow = { initial_node: 'greet', nodes: [{ node_name: 'greet', task_messages: [{ role: 'system', content: 'Greet the customer.' }] }] };
    const template = await must('template', admin.call('POST', '/templates', { name: 'faults', reseller_id: reseller, flow }));
    await must('configuration', admin.call('POST', '/configurations', {
      reseller_id: reseller, template: template.id, calling_provider: 'PROVIDER_A',
      call_start_time: '00:00', call_end_time: '00:00', retry_offset: 1, max_retry: 2,
    }));
    // Busy callees of this template's leads finish at once (no retry): their webhooks go out at once.
    const once = await must('template', admin.call('POST', '/templates', { name: 'faults-once', reseller_id: reseller, flow }));
    await must('configuration', admin.call('POST', '/configurations', {
      reseller_id: reseller, template: once.id, calling_provider: 'PROVIDER_A', call_start_time: '00:00', call_end_time: '00:00', retry_offset: 1, max_retry: 0,
    }));
    for (let i = 0; i < 10; i++) await must('number', admin.call('POST', '/numbers', { phone_number: `+1212555${String(7000 + i)}`, provider: 'PROVIDER_A' }));

    const push = (callee: string, reportTo?: string) =>
      must('push', admin.call('POST', '/leads', {
        request_id: `fault-${++pushed}`, template: reportTo ? 'faults-once' : 'faults', reseller_id: reseller,
        payload: { customer_mobile_number: callee, customer_name: 'Sam' }, ...(reportTo ? { reporting_webhook_url: reportTo } : {}),
      }));
    const lead = (id: string) => must('lead', admin.call('GET', `/leads/${id}`));
    const finished = async (ids: string[]) => {
      const leads = await Promise.all(ids.map(lead));
      return leads.every((l) => l.status === 'FINISHED') ? leads : undefined;
    };
    const callsTo = (numbers: string[]) => emulator!.calls.filter((c) => numbers.includes(c.to)).length;

    if (!only || only.has(1)) {
      const numbers = ['+16465551001', '+16465551002', '+16465551003'];
      const ids: string[] = [];
      for (const n of numbers) ids.push((await push(n)).lead_call_tracker_id);
      const pushedAt = Date.now();
      await sleep(Math.max(0, 2500 - (Date.now() - pushedAt)));
      const live = callsTo(numbers);
      await pg.halt();
      const haltedAt = Date.now();
      await sleep(10_000);
      await pg.start();
      say(`1. database outage: PostgreSQL down ${((Date.now() - haltedAt) / 1000).toFixed(1)} s with ${live} of 3 calls placed`);
      const leads = await until('the three leads to finish', () => finished(ids), 180_000);
      const dials = callsTo(numbers);
      const attempts = leads.map((l) => l.attempt_count);
      const outcomes = leads.map((l) => l.outcome);
      const ok = dials === 3 && attempts.every((a) => a === 1) && !outcomes.includes('worker_lost');
      results.push({ n: 1, ok, line: `database outage: ${dials} dials for 3 leads, attempts ${attempts.join('/')}, outcomes ${outcomes.join('/')}` });
      say(`   ${results.at(-1)!.line}`);
    }

    if (!only || only.has(2)) {
      const receiver = new Receiver(await freePort());
      receivers.push(receiver);
      // Down from the start: the 20 leads are busy (finished at once, no retry), their webhooks find nobody.
      const busy = Array.from({ length: 20 }, (_, i) => `+1646555${String(2000 + i)}`);
      for (const n of busy) emulator.script(n, { answer: 'busy' });
      const ids: string[] = [];
      for (const n of busy) ids.push((await push(n, receiver.url)).lead_call_tracker_id);
      const downFrom = Date.now();
      await until('the 20 leads to finish', () => finished(ids), 120_000);
      await sleep(Math.max(0, 30_000 - (Date.now() - downFrom)));
      await receiver.up();
      const upAt = Date.now();
      await until('20 deliveries', () => receiver.deliveries().size >= 20, 120_000).catch(() => undefined);
      await sleep(2000);
      const byDelivery = new Map<string, Set<string>>();
      for (const g of receiver.got) byDelivery.set(g.leadId, (byDelivery.get(g.leadId) ?? new Set()).add(g.deliveryId));
      const leadsReached = [...byDelivery.keys()].filter(Boolean).length;
      const idsShared = [...byDelivery.values()].every((s) => s.size === 1);
      const lastAt = Math.max(...receiver.got.map((g) => g.at));
      const ok = receiver.deliveries().size === 20 && idsShared;
      results.push({ n: 2, ok, line: `receiver outage (30 s): ${receiver.deliveries().size} of 20 webhooks delivered, ${leadsReached} leads reached, ${receiver.got.length} requests in all, one delivery id per lead: ${idsShared ? 'yes' : 'no'}, the last ${((lastAt - upAt) / 1000).toFixed(1)} s after the receiver came back` });
      say(`2. ${results.at(-1)!.line}`);
    }

    if (!only || only.has(3)) {
      const dead = new Receiver(await freePort());
      const healthy = new Receiver(await freePort());
      receivers.push(dead, healthy);
      dead.mode = 'mute';
      await dead.up();
      await healthy.up();
      const deadCallees = Array.from({ length: 3 }, (_, i) => `+1646555${String(3000 + i)}`);
      const healthyCallees = Array.from({ length: 10 }, (_, i) => `+1646555${String(3100 + i)}`);
      for (const n of [...deadCallees, ...healthyCallees]) emulator.script(n, { answer: 'busy' });
      for (const n of deadCallees) await push(n, dead.url);
      await until('the dead receiver to hold three deliveries', () => dead.deliveries().size >= 3, 60_000);
      const ids: string[] = [];
      for (const n of healthyCallees) ids.push((await push(n, healthy.url)).lead_call_tracker_id);
      const leads = await until('the 10 leads to finish', () => finished(ids), 60_000);
      const finishedAt = Math.max(...leads.map((l) => Date.parse(l.call_end_time ?? l.updated_at ?? '') || 0));
      await until('10 healthy deliveries', () => healthy.deliveries().size >= 10, 60_000).catch(() => undefined);
      const lastAt = Math.max(...healthy.got.map((g) => g.at));
      const waited = lastAt - finishedAt;
      const ok = healthy.deliveries().size === 10 && waited < 5_000;
      results.push({ n: 3, ok, line: `dead receiver beside a healthy one: ${healthy.deliveries().size} of 10 healthy deliveries, the last ${waited} ms after the last of their leads finished, while the dead receiver held ${dead.got.length} requests` });
      say(`3. ${results.at(-1)!.line}`);
      await dead.down();
    }

    if (!only || only.has(4)) {
      const slow = new Receiver(await freePort());
      receivers.push(slow);
      slow.mode = 'mute';
      await slow.up();
      const callee = '+16465554000';
      for (const n of [callee]) emulator.script(n, { answer: 'busy' });
      await push(callee, slow.url);
      const first = await until('the first attempt', () => slow.got[0], 60_000);
      const pid = pidOfLocalPort(first.remotePort);
      const victim = procs.find((p) => p.child.pid === pid);
      if (!victim) throw new Error(`no worker holds the delivery's connection (port ${first.remotePort}, pid ${pid})`);
      slow.mode = 'up';
      await victim.stop('SIGKILL');
      const killedAt = Date.now();
      const next = await until('another attempt', () => slow.got.find((g) => g.at > killedAt && g.deliveryId === first.deliveryId), 120_000).catch(() => undefined);
      const tookOverMs = next ? next.at - killedAt : NaN;
      const ok = next !== undefined && tookOverMs <= 60_000 && next.attempt > first.attempt;
      results.push({ n: 4, ok, line: `worker killed mid-delivery (${victim.name}): taken over after ${(tookOverMs / 1000).toFixed(1)} s, attempt ${first.attempt} then ${next?.attempt ?? 'none'}, same delivery id: ${next ? 'yes' : 'no'}` });
      say(`4. ${results.at(-1)!.line}`);
    }
  } finally {
    for (const p of procs) await p.stop().catch(() => {});
    for (const r of receivers) await r.down();
    await emulator?.close();
    await pg.stop();
    if (!keepLogs) fs.rmSync(logDir, { recursive: true, force: true });
    else say(`logs: ${logDir}`);
  }
  const bad = results.filter((r) => !r.ok);
  say(`faults: ${results.length - bad.length} of ${results.length} experiments lost nothing and did nothing twice${bad.length ? ` (failed: ${bad.map((b) => b.n).join(', ')})` : ''}; load ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`);
  process.exit(bad.length ? 1 : 0);
}

await main();
