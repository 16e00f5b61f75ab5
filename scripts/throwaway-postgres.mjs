/**
 * A throwaway PostgreSQL server from the machine's server binaries (Debian's postgresql package):
 * initdb in a temp directory, started on a free port, removed on stop. `npm test` runs the API and
 * storage suites against one; tests that must restart a server (connection loss) start their own.
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

function findPgBin() {
  const candidates = [];
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
 * Starts a throwaway PostgreSQL; returns { url, port, stop, restart } or throws with a clear reason.
 * `restart()` stops the server (fast shutdown: every connection is cut) and starts it again on the
 * same port and data; `quiet` keeps the start-up line off stdout.
 */
export async function startThrowawayPostgres({ quiet = false } = {}) {
  const bin = findPgBin();
  if (!bin) {
    throw new Error(
      'no PostgreSQL server binaries found (looked in /usr/lib/postgresql/*/bin and PATH). ' +
        'Install them (apt-get install -y postgresql) or set DATABASE_URL to a server the tests may create databases in.',
    );
  }
  const asRoot = process.getuid?.() === 0;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dialer-pg-'));
  const asUser = (cmd, args) => (asRoot ? ['runuser', ['-u', 'postgres', '--', cmd, ...args]] : [cmd, args]);
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
  let server;

  async function start() {
    const [pgCmd, pgArgs] = asUser(path.join(bin, 'postgres'), [
      '-D', dataDir, '-p', String(port), '-k', dir, '-h', '127.0.0.1',
      '-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off', '-c', 'max_connections=300',
    ]);
    server = spawn(pgCmd, pgArgs, { stdio: ['ignore', 'ignore', 'pipe'] });
    let log = '';
    server.stderr.on('data', (d) => (log += d));
    const started = Date.now();
    for (;;) {
      if (server.exitCode !== null) throw new Error(`PostgreSQL exited at start: ${log}`);
      const ok = await new Promise((resolve) => {
        const s = net.connect(port, '127.0.0.1', () => (s.end(), resolve(true)));
        s.on('error', () => resolve(false));
      });
      if (ok && /ready to accept connections/.test(log)) break;
      if (Date.now() - started > 30_000) throw new Error(`PostgreSQL did not start within 30 s: ${log}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  async function halt() {
    // Signal the postmaster itself (runuser does not pass signals on): fast shutdown.
    try {
      const pid = Number(fs.readFileSync(path.join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
      process.kill(pid, 'SIGINT');
    } catch {
      server.kill('SIGINT');
    }
    await new Promise((r) => {
      if (server.exitCode !== null) return r();
      const timer = setTimeout(() => (server.kill('SIGKILL'), r()), 10_000);
      server.on('exit', () => (clearTimeout(timer), r()));
    });
  }

  await start();
  if (!quiet) process.stdout.write(`Started a throwaway PostgreSQL (${path.basename(path.dirname(bin))}) on port ${port}\n`);
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    /** Stops the server, keeping its data (connections see it go down). */
    halt,
    /** Starts a halted server again. */
    start,
    async restart() {
      await halt();
      await start();
    },
    async stop() {
      await halt();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
