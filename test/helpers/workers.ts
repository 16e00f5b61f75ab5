/**
 * Worker processes on one PostgreSQL and the far side they dial: each worker
 * (test/helpers/worker-process.ts) is a Scheduler whose calls are POSTs to the test's callee
 * server, answered when the test ends the call.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface WorkerOptions {
  databaseUrl: string;
  calleeUrl: string;
  /** How long a worker's claim on a lead lasts without renewal. */
  leaseSeconds: number;
  /** The worker's pool of live calls. */
  maxCalls: number;
  /** Where it keeps the ends it could not write. */
  journalDir?: string;
}

/** A worker process, started: `ready` once it polls, `exited` with its code when it ends. */
export interface WorkerProcess {
  child: ChildProcess;
  ready: Promise<void>;
  exited: Promise<number | null>;
}

export function startWorker(id: string, o: WorkerOptions): WorkerProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/helpers/worker-process.ts'], {
    env: {
      ...process.env,
      DATABASE_URL: o.databaseUrl,
      CALLEE_URL: o.calleeUrl,
      WORKER_ID: id,
      LEASE_SECONDS: String(o.leaseSeconds),
      MAX_CALLS: String(o.maxCalls),
      ...(o.journalDir ? { JOURNAL_DIR: o.journalDir } : {}),
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const ready = new Promise<void>((resolve, reject) => {
    child.stdout!.once('data', () => resolve());
    void exited.then((code) => reject(new Error(`worker ${id} exited with ${code}`)));
  });
  ready.catch(() => {});
  return { child, ready, exited };
}

/** What a worker sends the far side for each call. */
export interface CalleeDial {
  leadId: string;
  attempt: number;
  worker: string;
  from: string;
}

/** The far side: `onDial` answers each call's request (with the call's end as JSON) when the call ends. */
export async function startCallee(onDial: (dial: CalleeDial, res: http.ServerResponse) => void): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk));
    req.on('end', () => onDial(JSON.parse(body) as CalleeDial, res));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Answers a call's request with its end. */
export function endCall(res: http.ServerResponse, end: Record<string, unknown>): void {
  res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(end));
}
