/**
 * `dialer serve` as a child process for benchmarks, and a light HTTP client for it (undici's
 * connection pool: the load generator should cost little CPU next to the service it loads).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { Pool } from 'undici';
import { API_PREFIX } from '../../src/app.js';

export interface ServedDialer {
  child: ChildProcess;
  /** Base URL with the API prefix. */
  url: string;
  /** Requests through a pool of `connections` kept-alive connections. */
  call(method: 'GET' | 'POST', path: string, body?: unknown, token?: string): Promise<{ status: number; body: any }>;
  /** SIGTERM, then waits for the process to exit. */
  stop(): Promise<void>;
}

/** Starts `dialer serve` with `env` (PORT must be set) and waits until it answers. */
export async function serveDialer(options: { env: NodeJS.ProcessEnv; args?: string[]; nodeArgs?: string[]; connections?: number }): Promise<ServedDialer> {
  const port = options.env.PORT;
  if (!port) throw new Error('serveDialer needs PORT');
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), '--import', 'tsx', 'src/cli.ts', 'serve', ...(options.args ?? [])], {
    env: options.env,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  // The request log is not needed, but a full pipe would stall the service: keep reading.
  child.stdout!.on('data', () => {});
  const origin = `http://127.0.0.1:${port}`;
  const pool = new Pool(origin, { connections: options.connections ?? 50 });
  const call: ServedDialer['call'] = async (method, path, body, token) => {
    const res = await pool.request({
      path: `${API_PREFIX}${path}`,
      method,
      headers: {
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...(token ? { authorization: `Bearer ${token}` } : {}),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.statusCode, body: await res.body.json() };
  };
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  // A first start migrates a fresh database: minutes for PGlite on a loaded machine.
  const deadline = Date.now() + 10 * 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`dialer serve exited with ${child.exitCode}`);
    try {
      if ((await call('GET', '/health')).status === 200) break;
    } catch {
      /* not listening yet */
    }
    if (Date.now() > deadline) {
      // Not left running behind a failed benchmark.
      child.kill('SIGTERM');
      throw new Error('dialer serve did not start within 10 minutes');
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    child,
    url: `${origin}${API_PREFIX}`,
    call,
    async stop() {
      await pool.close();
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

/** Percentile of a list of numbers (nearest rank); NaN for an empty list. */
export function percentileOf(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

/** Runs `task(0..n-1)` with `concurrency` loops; returns each task's latency (ms) and the rate per second. */
export async function concurrently(n: number, concurrency: number, task: (i: number) => Promise<void>): Promise<{ rate: number; latenciesMs: number[] }> {
  let next = 0;
  const latenciesMs: number[] = [];
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let i = next++; i < n; i = next++) {
        const t = performance.now();
        await task(i);
        latenciesMs.push(performance.now() - t);
      }
    }),
  );
  return { rate: n / ((performance.now() - started) / 1000), latenciesMs };
}
