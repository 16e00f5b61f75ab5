/**
 * npm run bench:template-tests: how long a template's test suite takes to run. `dialer serve` on
 * the embedded database with the sandbox line, the voice engine on a local OpenAI-compatible
 * server (scripted answers, as in the template-tests suite); a two-node booking flow with CASES
 * (default 20) scripted cases, half that book a visit and half that decline. Measured, in the same
 * run: one case alone (the baseline: what one call of the suite costs end to end), then the whole
 * suite (POST /templates/{id}/tests/run until the run is over). NUMBERS (default 10) caller IDs per
 * sandbox provider bound how many cases are live at once.
 * Last line: `template-tests: N cases in S s (one case alone B s, ratio S/B), P passed, F failed`.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startOpenAIServer } from '../test/helpers/openai-server.js';
import { callee, FLOW } from '../test/fixtures/booking.js';
import { freePort } from '../test/helpers/net.js';
import { serveDialer } from './lib/serve.js';

const CASES = Number(process.env.CASES ?? 20);
const NUMBERS = Number(process.env.NUMBERS ?? 10);
const load = () => os.loadavg().map((l) => l.toFixed(2)).join(' ');
const out = (line: string) => process.stdout.write(`${line}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Case i: even ones book (their customer is "Booker i"), odd ones decline. */
const testCase = (i: number) =>
  i % 2 === 0
    ? {
        name: `books ${i}`,
        variables: { customer_name: `Booker${i}` },
        callee: callee('Yes, Tuesday works for me.'),
        expectations: [{ kind: 'outcome', equals: 'booked' }, { kind: 'function_called', name: 'book_visit', arguments: { day: 'Tuesday' } }, { kind: 'says', text: 'your visit is booked' }],
      }
    : { name: `declines ${i}`, variables: { customer_name: `Decliner${i}` }, callee: callee('No, thank you.'), expectations: [{ kind: 'says', text: 'no problem' }] };

const ai = await startOpenAIServer();
ai.respond = (body: any) => {
  const prompt = JSON.stringify(body.messages);
  const spoke = body.messages.some((m: any) => m.role === 'user');
  const name = /(Booker|Decliner)\d+/.exec(prompt)?.[0] ?? 'there';
  if (name.startsWith('Booker')) return spoke ? { tools: [{ name: 'book_visit', arguments: { day: 'Tuesday' } }] } : { text: `Hi ${name}, shall I book your visit for Tuesday?` };
  return spoke ? { text: 'No problem, goodbye.' } : { text: `Hi ${name}, shall I book your visit for Tuesday?` };
};
ai.transcribe = () => 'Okay.';

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'dialer-bench-template-tests-'));
const port = await freePort();
const dialer = await serveDialer({
  connections: 4,
  env: {
    ...process.env,
    PORT: String(port),
    DIALER_DATA_DIR: dataDir,
    DATABASE_URL: '',
    DIALER_SANDBOX: 'true',
    DIALER_ADMIN_EMAIL: 'bench@example.com',
    DIALER_ADMIN_PASSWORD: 'bench-password',
    DIALER_JWT_SECRET: 'bench-template-tests-secret-bench-template',
    TWILIO_ACCOUNT_SID: '',
    TWILIO_AUTH_TOKEN: '',
    LLM_BASE_URL: ai.url,
    STT_BASE_URL: ai.url,
    LOG_LEVEL: 'warn',
  },
});
try {
  out(`bench:template-tests: PGlite in ${dataDir}, sandbox line, ${CASES} cases, ${NUMBERS} caller IDs per sandbox provider; ${os.cpus().length} CPUs; load average ${load()}`);
  const token = (await dialer.call('POST', '/login', { email: 'bench@example.com', password: 'bench-password' })).body.access_token as string;
  const api = async (method: 'GET' | 'POST', p: string, body?: unknown) => {
    const res = await dialer.call(method, p, body, token);
    if (res.status >= 400) throw new Error(`${method} ${p}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  };
  const reseller = (await api('POST', '/resellers', { name: 'Bench' })).id as string;
  const template = (await api('POST', '/templates', { name: 'booking', reseller_id: reseller, flow: FLOW })).id as string;
  for (const provider of (await api('GET', '/sandbox')).providers as string[]) {
    for (let i = 0; i < NUMBERS; i++) {
      const res = await dialer.call('POST', '/numbers', { phone_number: `+1212556${String(1000 + (provider.charCodeAt(provider.length - 1) % 10) * 100 + i)}`, provider }, token);
      if (res.status >= 400 && res.status !== 409) throw new Error(`POST /numbers: ${res.status} ${JSON.stringify(res.body)}`);
    }
  }
  const run = async (body: unknown) => {
    const started = performance.now();
    const { id } = await api('POST', `/templates/${template}/tests/run`, body);
    for (;;) {
      const r = await api('GET', `/test-runs/${id}`);
      if (r.status !== 'running') return { run: r, seconds: (performance.now() - started) / 1000 };
      await sleep(250);
    }
  };
  // The baseline: one case alone (not stored), after one run to warm the voice and the flow.
  await run({ cases: [testCase(0)] });
  const alone = await run({ cases: [testCase(0)] });
  out(`one case alone: ${alone.seconds.toFixed(1)} s, ${alone.run.status}; load ${load()}`);
  for (let i = 0; i < CASES; i++) await api('POST', `/templates/${template}/tests`, testCase(i));
  const suite = await run({});
  const cases = suite.run.cases as { status: string; name: string }[];
  const passed = cases.filter((c) => c.status === 'passed').length;
  out(`suite: ${cases.length} cases in ${suite.seconds.toFixed(1)} s, ${passed} passed; load ${load()}`);
  for (const c of cases.filter((c) => c.status !== 'passed')) out(`  ${c.name}: ${c.status}`);
  out(`template-tests: ${cases.length} cases in ${suite.seconds.toFixed(1)} s (one case alone ${alone.seconds.toFixed(1)} s, ratio ${(suite.seconds / alone.seconds).toFixed(2)}), ${passed} passed, ${cases.length - passed} failed`);
} finally {
  await dialer.stop();
  await ai.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
}
