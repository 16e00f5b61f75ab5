/**
 * Feature flags through OpenFeature over a flagd-format file: defaults without a file, targeting by
 * reseller, what a reload reports as changed, a malformed file keeping the flags in force, the
 * poll picking up a changed file, the webhook signature, and the settings' validation.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { pino } from 'pino';
import { ConfigError, loadConfig } from '../../src/config.js';
import { FlagFileError, Flags, signFlagWebhook, verifyFlagWebhook, type FlagSettings } from '../../src/flags/index.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dialer-flags-'));
after(() => fs.rmSync(dir, { recursive: true, force: true }));
const log = pino({ level: 'silent' });
let n = 0;

function settings(overrides: Partial<FlagSettings> = {}): FlagSettings {
  return {
    provider: 'file',
    file: path.join(dir, `flags-${++n}.json`),
    webhookSecret: undefined,
    pollSeconds: 0,
    defaults: { uploadRecordings: false, voicemailDetection: true },
    ...overrides,
  };
}

const bool = (defaultVariant: 'on' | 'off', targeting?: unknown) => ({ state: 'ENABLED', variants: { on: true, off: false }, defaultVariant, ...(targeting ? { targeting } : {}) });

describe('feature flags', () => {
  it('answers the defaults when the file does not exist', async () => {
    const flags = await Flags.open(settings({ defaults: { uploadRecordings: true, voicemailDetection: false } }), log);
    try {
      assert.equal(await flags.uploadRecordings(), true);
      assert.equal(await flags.voicemailDetection('r1'), false);
      assert.equal(await flags.diallingEnabled('r1'), true);
      assert.deepEqual(flags.definitions(), {});
    } finally {
      await flags.close();
    }
  });

  it('targets by reseller and reports exactly what a reload changed', async () => {
    const s = settings();
    fs.writeFileSync(s.file, JSON.stringify({ flags: { 'dialling-enabled': bool('on', { if: [{ in: [{ var: 'reseller_id' }, ['r-off']] }, 'off', 'on'] }) } }));
    const flags = await Flags.open(s, log);
    try {
      assert.equal(await flags.diallingEnabled('r-on'), true);
      assert.equal(await flags.diallingEnabled('r-off'), false);
      assert.deepEqual([...(await flags.diallingStopped(['r-on', 'r-off', 'r-off']))], ['r-off']);
      assert.deepEqual((await flags.refresh('test')).changed, [], 'nothing changed');
      fs.writeFileSync(
        s.file,
        JSON.stringify({ flags: { 'dialling-enabled': bool('on', { if: [{ in: [{ var: 'reseller_id' }, ['r-off']] }, 'off', 'on'] }), 'upload-recordings-to-cloud': bool('on') } }),
      );
      assert.deepEqual(await flags.refresh('test'), { changed: ['upload-recordings-to-cloud'], flags: ['dialling-enabled', 'upload-recordings-to-cloud'] });
      assert.equal(await flags.uploadRecordings(), true);
      fs.writeFileSync(s.file, JSON.stringify({ flags: {} }));
      assert.deepEqual((await flags.refresh('test')).changed, ['dialling-enabled', 'upload-recordings-to-cloud'], 'removed flags count as changed');
      assert.equal(await flags.diallingEnabled('r-off'), true, 'back to the default');
    } finally {
      await flags.close();
    }
  });

  it('keeps the flags in force when the file turns malformed, and refuses to start on one', async () => {
    const s = settings();
    fs.writeFileSync(s.file, JSON.stringify({ flags: { 'dialling-enabled': bool('off') } }));
    const flags = await Flags.open(s, log);
    try {
      for (const bad of ['{"flags":', '[]', '{"flags": {"x": {"state": "ENABLED", "variants": {"on": true}, "defaultVariant": "missing"}}}']) {
        fs.writeFileSync(s.file, bad);
        await assert.rejects(flags.refresh('test'), FlagFileError, bad);
        assert.equal(await flags.diallingEnabled('r'), false, `still in force after ${bad}`);
      }
      await assert.rejects(Flags.open(s, log), FlagFileError);
    } finally {
      await flags.close();
    }
  });

  it('picks up a changed file by polling its modification time', async () => {
    const s = settings({ pollSeconds: 1 });
    fs.writeFileSync(s.file, JSON.stringify({ flags: {} }));
    const flags = await Flags.open(s, log);
    try {
      fs.writeFileSync(s.file, JSON.stringify({ flags: { 'voicemail-detection': bool('off') } }));
      fs.utimesSync(s.file, new Date(), new Date(Date.now() + 5000));
      const deadline = Date.now() + 10_000;
      while (await flags.voicemailDetection('r')) {
        assert.ok(Date.now() < deadline, 'the poll never saw the change');
        await new Promise((r) => setTimeout(r, 100));
      }
    } finally {
      await flags.close();
    }
  });

  it('evaluates through the flagd provider too (its offline file mode), and reports the changes flagd pushed', async () => {
    const file = path.join(dir, 'flagd.json');
    fs.writeFileSync(file, JSON.stringify({ flags: { 'dialling-enabled': bool('on', { if: [{ '==': [{ var: 'reseller_id' }, 'r-off'] }, 'off', 'on'] }) } }));
    process.env.FLAGD_RESOLVER = 'in-process';
    process.env.FLAGD_OFFLINE_FLAG_SOURCE_PATH = file;
    const flags = await Flags.open(settings({ provider: 'flagd' }), log);
    try {
      assert.equal(flags.sourceLabel, 'flagd');
      assert.equal(await flags.diallingEnabled('r-on'), true);
      assert.equal(await flags.diallingEnabled('r-off'), false);
      assert.equal(await flags.voicemailDetection('r-on'), true, 'an undefined flag gets its default');
      fs.writeFileSync(file, JSON.stringify({ flags: { 'dialling-enabled': bool('on'), 'voicemail-detection': bool('off') } }));
      // flagd's file watcher picks the change up by itself: it polls the file's status every 5 s
      // (fs.watchFile). Its first status is taken in the background after the provider is ready, so
      // on a busy machine it can already see the new file and never report it; moving the file's
      // time on every few seconds makes a change it must see.
      const deadline = Date.now() + 30_000;
      for (let polls = 1; !(await flags.diallingEnabled('r-off')); polls++) {
        assert.ok(Date.now() < deadline, 'flagd never saw the change');
        await new Promise((r) => setTimeout(r, 200));
        if (polls % 30 === 0) fs.utimesSync(file, new Date(), new Date(Date.now() + polls * 100));
      }
      assert.equal(await flags.voicemailDetection('r-on'), false);
      const refreshed = await flags.refresh('webhook');
      assert.ok(refreshed.changed.includes('voicemail-detection'), JSON.stringify(refreshed));
      assert.deepEqual((await flags.refresh('webhook')).changed, [], 'reported once');
    } finally {
      await flags.close();
      delete process.env.FLAGD_RESOLVER;
      delete process.env.FLAGD_OFFLINE_FLAG_SOURCE_PATH;
    }
  });

  it('verifies X-Hub-Signature-256 over the raw body', () => {
    const body = '{"flags":{"updated":{}}}';
    const header = signFlagWebhook('a-secret-of-16-chars', body);
    assert.match(header, /^sha256=[0-9a-f]{64}$/);
    assert.equal(verifyFlagWebhook('a-secret-of-16-chars', header, body), true);
    assert.equal(verifyFlagWebhook('a-secret-of-16-chars', header.toUpperCase().replace('SHA256', 'sha256'), body), true);
    assert.equal(verifyFlagWebhook('another-secret-16ch', header, body), false);
    assert.equal(verifyFlagWebhook('a-secret-of-16-chars', header, `${body}\n`), false);
    for (const bad of [undefined, '', 'sha256=', 'sha1=abc', `sha256=${'z'.repeat(64)}`]) assert.equal(verifyFlagWebhook('a-secret-of-16-chars', bad, body), false);
  });

  it('reads its settings from the environment and refuses bad ones', () => {
    const c = loadConfig({ DIALER_DATA_DIR: '/data', DIALER_MACHINE_DETECTION: 'false', UPLOAD_VOICE_AGENT_CALL_RECORDINGS_TO_CLOUD: 'true', RECORDINGS_S3_BUCKET: 'recordings', DIALER_FLAGS_WEBHOOK_SECRET: 'x'.repeat(16) });
    assert.deepEqual(c.flags, { provider: 'file', file: path.resolve('/data/flags.json'), webhookSecret: 'x'.repeat(16), pollSeconds: 10, defaults: { uploadRecordings: true, voicemailDetection: false } });
    for (const env of [{ DIALER_FLAGS_WEBHOOK_SECRET: 'short' }, { DIALER_FLAGS_POLL_SECONDS: 'soon' }, { DIALER_MACHINE_DETECTION: 'maybe' }, { DIALER_METRICS_TOKEN: 'short' }, { DIALER_SERVICE_CALLBACK_URL: 'ftp://x' }, { DIALER_FLAGS_PROVIDER: 'launchdarkly' }]) {
      assert.throws(() => loadConfig(env), ConfigError, JSON.stringify(env));
    }
  });
});
