/**
 * `dialer serve` in a child process of its own, for benchmarks: its CPU and event loop are its own,
 * as in production. Resolves once the bootstrap admin can log in.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { API_PREFIX } from '../../src/app.js';
import { freePort } from '../../test/helpers/net.js';

export interface BenchDialer {
  /** Base URL with the API prefix. */
  url: string;
  child: ChildProcess;
  dataDir: string;
  /** The admin's bearer token. */
  token: string;
  /** Calls the API as the admin. */
  api(method: string, p: string, body?: unknown): Promise<{ status: number; body: any }>;
  stop(): Promise<void>;
}

const ADMIN = { email: 'bench@example.com', password: 'bench-password' };

/**
 * Starts Dialer with `env` over the process environment. `wrap` puts a command before node (e.g.
 * `taskset -c 1`); `nodeArgs` go to node itself; Dialer's stdout is shown only when `showOutput`.
 */
export async function startBenchDialer(env: Record<string, string>, options: { wrap?: string[]; nodeArgs?: string[]; showOutput?: boolean } = {}): Promise<BenchDialer> {
  const port = await freePort();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'dialer-bench-'));
  const url = `http://127.0.0.1:${port}${API_PREFIX}`;
  const node = [process.execPath, ...(options.nodeArgs ?? []), '--import', 'tsx', 'src/cli.ts', 'serve'];
  const [cmd, ...args] = [...(options.wrap ?? []), ...node];
  const child = spawn(cmd!, args, {
    env: { ...process.env, PORT: String(port), DIALER_DATA_DIR: dataDir, DIALER_ADMIN_EMAIL: ADMIN.email, DIALER_ADMIN_PASSWORD: ADMIN.password, LOG_LEVEL: 'error', ...env },
    stdio: ['ignore', options.showOutput ? 'inherit' : 'ignore', 'inherit'],
  });
  const stop = async () => {
    if (child.exitCode === null) {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    }
    fs.rmSync(dataDir, { recursive: true, force: true });
  };
  for (let i = 0; ; i++) {
    if (child.exitCode !== null) throw new Error(`dialer exited at start (${child.exitCode})`);
    try {
      const login = await fetch(`${url}/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(ADMIN) });
      if (login.ok) {
        const token = ((await login.json()) as { access_token: string }).access_token;
        const api = async (method: string, p: string, body?: unknown) => {
          const res = await fetch(`${url}${p}`, { method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
          return { status: res.status, body: (await res.json()) as any };
        };
        return { url, child, dataDir, token, api, stop };
      }
    } catch {
      /* not up yet */
    }
    if (i > 1200) {
      await stop();
      throw new Error('dialer did not start');
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}
