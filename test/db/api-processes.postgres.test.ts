/**
 * Any process serves any request: two `dialer serve --role api` processes on one PostgreSQL behind a
 * round-robin proxy (no sticky routing). A real Chromium places a WEBRTC_STREAM session through the
 * proxy; the tts-speak and the hangup that land on the process not hosting the session are forwarded
 * to the one that does (through the session table), and work as they would there. PostgreSQL only
 * (the embedded database serves one process): the PGlite run leaves this file out.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { API_PREFIX } from '../../src/app.js';
import { encodeWav } from '../../src/lib/audio.js';
import { synthesize } from '../../src/lib/speech.js';
import { launchBrowser, type TestBrowser } from '../helpers/browser.js';
import { createPgDatabase } from '../helpers/db.js';
import { freePort } from '../helpers/net.js';
import { startOpenAIServer, type OpenAIServer } from '../helpers/openai-server.js';

const root = path.resolve(import.meta.dirname, '../..');
const EMAIL = 'admin@example.com';
const PASSWORD = 'admin-password-1';
const CALLER_WORDS = 'Hello, can you hear me?';
const SECRET = 'any-process-secret-any-process-secret-01';


/**
 * A proxy that sends each request to the next upstream in turn, and remembers which one took it.
 * `avoid(url, upstream)`: the next request for that URL skips that upstream in the rotation (the
 * browser's own requests share the rotation, so the test cannot count its way there).
 */
function roundRobin(upstreams: string[]) {
  let next = 0;
  const log: Array<{ method: string; url: string; upstream: number }> = [];
  const avoided = new Map<string, number>();
  const server = http.createServer((req, res) => {
    let upstream = next++ % upstreams.length;
    const skip = avoided.get(req.url!);
    if (skip !== undefined) {
      avoided.delete(req.url!);
      if (upstream === skip) upstream = next++ % upstreams.length;
    }
    log.push({ method: req.method!, url: req.url!, upstream });
    const target = new URL(upstreams[upstream]!);
    const forwarded = http.request({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode!, answer.headers);
      answer.pipe(res);
    });
    forwarded.on('error', (err) => res.writeHead(502).end(err.message));
    req.pipe(forwarded);
  });
  return {
    log,
    avoid: (url: string, upstream: number) => avoided.set(url, upstream),
    listen: () => new Promise<string>((resolve) => server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as { port: number }).port}`))),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('two API processes behind a round-robin proxy', () => {
  let ai: OpenAIServer;
  let browser: TestBrowser;
  let proxy: ReturnType<typeof roundRobin>;
  let proxyUrl: string;
  let drop: () => Promise<void>;
  const children: ChildProcess[] = [];
  const dirs: string[] = [];

  const serve = async (databaseUrl: string): Promise<string> => {
    const port = await freePort();
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'dialer-any-'));
    dirs.push(dataDir);
    const logFile = fs.openSync(path.join(dataDir, 'dialer.log'), 'w');
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'serve', '--role', 'api'], {
      cwd: root,
      env: {
        ...process.env, PORT: String(port), HOST: '127.0.0.1', DATABASE_URL: databaseUrl, DIALER_DATA_DIR: dataDir, DIALER_JWT_SECRET: SECRET,
        DIALER_ADMIN_EMAIL: EMAIL, DIALER_ADMIN_PASSWORD: PASSWORD, LOG_LEVEL: 'warn', LLM_BASE_URL: ai.url, STT_BASE_URL: ai.url,
      },
      // Its log, shown when a test fails.
      stdio: ['ignore', logFile, logFile],
    });
    children.push(child);
    const url = `http://127.0.0.1:${port}`;
    for (let i = 0; ; i++) {
      if (child.exitCode !== null) throw new Error(`dialer serve exited with ${child.exitCode}`);
      const up = await fetch(`${url}${API_PREFIX}/health`).then((r) => r.ok, () => false);
      if (up) return url;
      if (i > 1200) throw new Error('dialer serve did not start');
      await new Promise((r) => setTimeout(r, 100));
    }
  };

  before(async () => {
    ai = await startOpenAIServer();
    const db = await createPgDatabase();
    drop = db.drop;
    // One after the other: the first migrates the database.
    const upstreams = [await serve(db.url), await serve(db.url)];
    proxy = roundRobin(upstreams);
    proxyUrl = await proxy.listen();
    const mic = path.join(dirs[0]!, 'caller.wav');
    const rate = 16_000;
    const words = await synthesize(CALLER_WORDS, { sampleRateHz: rate });
    // 6 s of silence first: the session is connected by then, even on a busy machine.
    const pcm = new Int16Array(rate * 6 + words.length + rate * 20);
    pcm.set(words, rate * 6);
    fs.writeFileSync(mic, encodeWav(pcm, rate));
    browser = await launchBrowser(mic);
  });

  after(async () => {
    await browser?.close();
    // Each process stops on SIGTERM; one still running half a minute later is killed and reported.
    const stuck: number[] = [];
    await Promise.all(
      children.map(
        (c) =>
          new Promise<void>((resolve) => {
            if (c.exitCode !== null || c.signalCode !== null) return resolve();
            const timer = setTimeout(() => (stuck.push(c.pid!), c.kill('SIGKILL')), 30_000);
            c.once('exit', () => (clearTimeout(timer), resolve()));
            c.kill('SIGTERM');
          }),
      ),
    );
    await proxy?.close();
    await ai?.close();
    await drop?.();
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
    assert.deepEqual(stuck, [], 'dialer serve did not exit within 30 s of SIGTERM');
  });

  it("a WEBRTC_STREAM session's tts-speak and hangup that reach the other process are carried out by the one hosting it", async () => {
    try {
      await spreadSession();
    } catch (err) {
      for (const d of dirs) process.stderr.write(`--- the log of the process in ${d}\n${fs.readFileSync(path.join(d, 'dialer.log'), 'utf8')}\n`);
      throw err;
    }
  });

  async function spreadSession(): Promise<void> {
    const call = async (method: string, p: string, token: string, body?: unknown) => {
      const res = await fetch(`${proxyUrl}${API_PREFIX}${p}`, {
        method,
        headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return { status: res.status, body: (await res.json()) as any };
    };
    const login = await fetch(`${proxyUrl}${API_PREFIX}/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: EMAIL, password: PASSWORD }) });
    const token = ((await login.json()) as { access_token: string }).access_token;
    const reseller = (await call('POST', '/resellers', token, { name: 'Spread' })).body.id;
    const flow = { initial_node: 'a', nodes: [{ node_name: 'a', task_messages: [{ role: 'system', content: 'Hi {customer_name}' }] }] };
    const template = await call('POST', '/templates', token, { name: 'spread', reseller_id: reseller, flow });
    assert.equal(template.status, 200);

    ai.transcripts.push(CALLER_WORDS);
    // The dashboard's Test in browser, on the template's page.
    const page: Page = await browser.context.newPage();
    await page.goto(`${proxyUrl}${API_PREFIX}/app/templates/${template.body.id}?test=1`);
    await page.getByLabel('Email').fill(EMAIL);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.locator('#test-call').waitFor();
    await page.locator('select[name="mode"]').selectOption('WEBRTC_STREAM');
    await page.getByLabel('customer_name').fill('Ana');
    await page.locator('#test-call').click();
    const heard = (role: string, text: string) =>
      page.waitForFunction(([r, t]) => (window as any).playground.events.some((e: any) => e.type === 'transcript' && e.role === r && e.final && e.text === t), [role, text], { timeout: 120_000 });
    await heard('user', CALLER_WORDS);
    const leadId = await page.evaluate(() => (window as any).playground.leadId as string);
    const owner = proxy.log.find((r) => r.url.endsWith(`/webrtc/${leadId}/offer`))!.upstream;

    /** Sends the request through the proxy so that it lands on the process not hosting the session. */
    const onTheOther = async (method: string, p: string, body?: unknown) => {
      proxy.avoid(`${API_PREFIX}${p}`, owner);
      const res = await call(method, p, token, body);
      const took = proxy.log.filter((r) => r.url === `${API_PREFIX}${p}`).at(-1)!;
      assert.notEqual(took.upstream, owner, `${p} went to the process hosting the session`);
      return res;
    };
    const spoken = await onTheOther('POST', `/leads/${leadId}/tts-speak`, { text: 'Hello from the other process.' });
    assert.equal(spoken.status, 202, JSON.stringify(spoken.body));
    await heard('assistant', 'Hello from the other process.');

    const ended = await onTheOther('POST', `/webrtc/${leadId}/hangup`);
    assert.equal(ended.status, 200, JSON.stringify(ended.body));
    assert.equal(ended.body.status, 'ended');
    const lead = (await call('GET', `/leads/${leadId}`, token)).body;
    assert.equal(lead.status, 'FINISHED');
    assert.equal(lead.metaData.call_ended_by, 'customer');
    assert.deepEqual(
      lead.metaData.transcription.map((t: any) => [t.role, t.content]),
      [['user', CALLER_WORDS], ['assistant', 'Hello from the other process.']],
    );
    // Once over, no process has the session.
    assert.equal((await onTheOther('POST', `/leads/${leadId}/tts-speak`, { text: 'late' })).body.code, 'no_session');
    await page.close();
  }
});
