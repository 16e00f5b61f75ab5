/**
 * A PostgreSQL for benchmarks: DATABASE_URL when set, otherwise a throwaway server started from the
 * machine's server binaries (Debian's postgresql package), removed on stop. The same approach as
 * scripts/test.mjs (startThrowawayPostgres): as root, initdb and postgres run as the `postgres` user.
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { freePort } from '../../test/helpers/net.js';

export interface PgServer {
  /** Connection string of the server's `postgres` database. */
  url: string;
  /** What it is, for the report. */
  label: string;
  /** The postmaster's process ID, when the server is a throwaway one of this machine. */
  pid?: number;
  stop(): Promise<void>;
}


function findPgBin(): string | undefined {
  const candidates: string[] = [];
  if (process.env.PG_BIN) candidates.push(process.env.PG_BIN);
  try {
    const base = '/usr/lib/postgresql';
    for (const v of fs.readdirSync(base).sort((a, b) => Number(b) - Number(a))) candidates.push(path.join(base, v, 'bin'));
  } catch {
    /* not Debian */
  }
  const which = spawnSync('sh', ['-c', 'command -v initdb'], { encoding: 'utf8' });
  if (which.status === 0 && which.stdout.trim()) candidates.push(path.dirname(which.stdout.trim()));
  return candidates.find((dir) => fs.existsSync(path.join(dir, 'initdb')) && fs.existsSync(path.join(dir, 'postgres')));
}

/**
 * Starts a throwaway PostgreSQL tuned like a small dedicated server (durability off: the data is
 * thrown away). `settings` are extra `-c name=value` server settings.
 */
export async function startThrowawayPostgres(settings: Record<string, string> = {}): Promise<PgServer> {
  const bin = findPgBin();
  if (!bin) {
    throw new Error(
      'no PostgreSQL server binaries found (looked in /usr/lib/postgresql/*/bin and PATH). ' +
        'Install them (apt-get install -y postgresql) or set DATABASE_URL to a server the benchmark may create databases in.',
    );
  }
  const asRoot = process.getuid?.() === 0;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dialer-bench-pg-'));
  const asUser = (cmd: string, args: string[]): [string, string[]] => (asRoot ? ['runuser', ['-u', 'postgres', '--', cmd, ...args]] : [cmd, args]);
  if (asRoot) {
    const id = spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' });
    if (id.status !== 0) throw new Error('running as root but there is no "postgres" system user to run PostgreSQL as (PostgreSQL refuses to run as root)');
    spawnSync('chown', ['-R', 'postgres', dir]);
  }
  const dataDir = path.join(dir, 'data');
  const [initCmd, initArgs] = asUser(path.join(bin, 'initdb'), ['-D', dataDir, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync']);
  const init = spawnSync(initCmd, initArgs, { encoding: 'utf8' });
  if (init.status !== 0) throw new Error(`initdb failed: ${init.stderr || init.stdout}`);
  const port = await freePort();
  const config = { fsync: 'off', synchronous_commit: 'off', full_page_writes: 'off', max_connections: '100', ...settings };
  const [pgCmd, pgArgs] = asUser(path.join(bin, 'postgres'), [
    '-D', dataDir, '-p', String(port), '-k', dir, '-h', '127.0.0.1',
    ...Object.entries(config).flatMap(([k, v]) => ['-c', `${k}=${v}`]),
  ]);
  const server = spawn(pgCmd, pgArgs, { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  server.stderr!.on('data', (d) => (log += d));
  const started = Date.now();
  for (;;) {
    if (server.exitCode !== null) throw new Error(`PostgreSQL exited at start: ${log}`);
    const ok = await new Promise<boolean>((resolve) => {
      const s = net.connect(port, '127.0.0.1', () => (s.end(), resolve(true)));
      s.on('error', () => resolve(false));
    });
    if (ok && /ready to accept connections/.test(log)) break;
    if (Date.now() - started > 30_000) throw new Error(`PostgreSQL did not start within 30 s: ${log}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  const pid = Number(fs.readFileSync(path.join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
  return {
    pid,
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    label: `throwaway PostgreSQL ${path.basename(path.dirname(bin))}`,
    stop: async () => {
      // Signal the postmaster itself (runuser does not pass signals on): fast shutdown.
      try {
        const pid = Number(fs.readFileSync(path.join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
        process.kill(pid, 'SIGINT');
      } catch {
        server.kill('SIGINT');
      }
      await new Promise<void>((r) => {
        if (server.exitCode !== null) return r();
        const timer = setTimeout(() => (server.kill('SIGKILL'), r()), 10_000);
        server.on('exit', () => (clearTimeout(timer), r()));
      });
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** DATABASE_URL's server when set, else a throwaway one. */
export async function benchPostgres(settings: Record<string, string> = {}): Promise<PgServer> {
  const url = process.env.DATABASE_URL?.trim();
  if (url) return { url, label: 'PostgreSQL at DATABASE_URL', stop: async () => {} };
  return startThrowawayPostgres(settings);
}

/** Creates a database in the server (`reuse`: keeps one that exists); `drop` removes it. */
export async function createDatabase(serverUrl: string, name: string, options: { reuse?: boolean } = {}): Promise<{ url: string; drop(): Promise<void> }> {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`not a plain database name: ${name}`);
  const run = async (sql: string, params: unknown[] = []) => {
    const client = new pg.Client({ connectionString: serverUrl });
    await client.connect();
    try {
      return await client.query(sql, params);
    } finally {
      await client.end();
    }
  };
  const exists = (await run('SELECT 1 FROM pg_database WHERE datname = $1', [name])).rowCount! > 0;
  if (exists && !options.reuse) throw new Error(`database ${name} already exists`);
  if (!exists) await run(`CREATE DATABASE ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      await run(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    },
  };
}
