/**
 * `dialer emulator --scenarios FILE` as docs/campaigns.md shows it: a real process that gives the
 * numbers of the file their callees (here a busy line, through Twilio's REST API and its signed
 * status callback), and names what is wrong with a file it cannot use.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';

const root = path.resolve(import.meta.dirname, '../..');
const SID = `AC${'7'.repeat(32)}`;
const TOKEN = 'scenarios-cli-token';
const children: ChildProcess[] = [];
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dialer-scenarios-'));

after(() => {
  children.forEach((c) => c.exitCode === null && c.kill('SIGKILL'));
  fs.rmSync(dir, { recursive: true, force: true });
});

function emulator(args: string[]): { child: ChildProcess; started: Promise<{ url: string; stdout: string }>; exited: Promise<{ code: number | null; stderr: string }> } {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'emulator', '--port', '0', '--twilio-account-sid', SID, '--twilio-auth-token', TOKEN, ...args], {
    cwd: root,
    env: { ...process.env, LOG_LEVEL: 'silent' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let stdout = '';
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += d));
  const exited = new Promise<{ code: number | null; stderr: string }>((resolve) => child.on('exit', (code) => resolve({ code, stderr })));
  const started = new Promise<{ url: string; stdout: string }>((resolve, reject) => {
    child.stdout!.on('data', (d) => {
      stdout += d;
      const m = /Provider emulator on (http:\/\/\S+) /.exec(stdout);
      if (m && stdout.includes('Ctrl-C stops.')) resolve({ url: m[1]!, stdout });
    });
    void exited.then(({ code }) => reject(new Error(`exited ${code}: ${stderr}`)));
  });
  // A process expected to fail never starts; one that started exits later: neither is an error here.
  started.catch(() => undefined);
  return { child, started, exited };
}

describe('dialer emulator --scenarios', () => {
  it("plays each number's callee from the file: a busy line is busy", async () => {
    const file = path.join(dir, 'callees.json');
    fs.writeFileSync(file, JSON.stringify({ '+14155550106': { kind: 'busy' }, '+14155550104': { kind: 'opt_out', says: 'Please do not call me again.' } }));
    const callbacks: Array<Record<string, string>> = [];
    const receiver = http.createServer((req, res) => {
      let body = '';
      req.on('data', (d) => (body += d));
      req.on('end', () => {
        callbacks.push(Object.fromEntries(new URLSearchParams(body)));
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    try {
      const { child, started } = emulator(['--scenarios', file]);
      const { url, stdout } = await started;
      assert.match(stdout, new RegExp(`2 number\\(s\\) play the callees of ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
      const statusUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/status`;
      const res = await fetch(`${url}/2010-04-01/Accounts/${SID}/Calls.json`, {
        method: 'POST',
        headers: { authorization: `Basic ${Buffer.from(`${SID}:${TOKEN}`).toString('base64')}`, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ To: '+14155550106', From: '+12125550100', Url: `${statusUrl}/answer`, StatusCallback: statusUrl }).toString(),
      });
      assert.equal(res.status, 201);
      const { sid } = (await res.json()) as { sid: string };
      // The final status callback says busy (the answer URL is never fetched).
      for (let i = 0; !callbacks.some((c) => c.CallSid === sid && c.CallStatus === 'busy'); i++) {
        assert.ok(i < 300, `no busy callback: ${JSON.stringify(callbacks)}`);
        await new Promise((r) => setTimeout(r, 100));
      }
      const call = (await (await fetch(`${url}/2010-04-01/Accounts/${SID}/Calls/${sid}.json`, { headers: { authorization: `Basic ${Buffer.from(`${SID}:${TOKEN}`).toString('base64')}` } })).json()) as { status: string };
      assert.equal(call.status, 'busy');
      child.kill('SIGTERM');
    } finally {
      receiver.close();
    }
  });

  it('refuses a file it cannot use, naming the file and what is wrong', async () => {
    const bad = path.join(dir, 'bad.json');
    fs.writeFileSync(bad, JSON.stringify({ '+14155550101': { kind: 'robot' } }));
    const missing = path.join(dir, 'missing.json');
    for (const [file, why] of [
      [bad, /"kind" must be one of voicemail, menu, opt_out, person, busy, no_answer, script/],
      [missing, /ENOENT/],
    ] as const) {
      const { code, stderr } = await emulator(['--scenarios', file]).exited;
      assert.notEqual(code, 0);
      assert.ok(stderr.includes(`--scenarios ${file}`), stderr);
      assert.match(stderr, why);
    }
  });
});
