import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { encodeWav } from '../../src/lib/audio.js';
import {
  createRecordingStore,
  InvalidCallSidError,
  LocalRecordingStore,
  parseRangeHeader,
  resolveRange,
  S3RecordingStore,
  type OpenedRecording,
} from '../../src/recordings/index.js';
import { ConfigError } from '../../src/config.js';
import { recordingsConfigFromEnv } from '../../src/config/recordings.js';
import { startS3Server, type S3Server } from '../helpers/s3-server.js';

const PUBLIC = 'https://dialer.example/agent/voice/dialer';
const wav = encodeWav(Int16Array.from({ length: 4000 }, (_, i) => Math.round(Math.sin(i / 5) * 8000)), 8000);

async function bytes(rec: OpenedRecording): Promise<Buffer> {
  if (Buffer.isBuffer(rec.body)) return rec.body;
  const chunks: Buffer[] = [];
  for await (const c of rec.body as AsyncIterable<Buffer | string>) chunks.push(Buffer.isBuffer(c) ? c : Buffer.from(c));
  return Buffer.concat(chunks);
}

describe('recordings config', () => {
  it('defaults to a local directory under the data dir', () => {
    assert.deepEqual(recordingsConfigFromEnv({}, '/data'), { dir: path.resolve('/data/recordings') });
    assert.deepEqual(recordingsConfigFromEnv({ DIALER_RECORDINGS_DIR: '/rec' }, '/data'), { dir: path.resolve('/rec') });
  });

  it('reads the cloud settings', () => {
    const c = recordingsConfigFromEnv(
      { UPLOAD_VOICE_AGENT_CALL_RECORDINGS_TO_CLOUD: 'true', RECORDINGS_S3_BUCKET: 'b', RECORDINGS_S3_ENDPOINT: 'http://minio:9000', RECORDINGS_S3_PREFIX: 'calls', AWS_ACCESS_KEY_ID: 'AK', AWS_SECRET_ACCESS_KEY: 'SK' },
      '/data',
    );
    assert.deepEqual(c.cloud, { bucket: 'b', region: 'us-east-1', endpoint: 'http://minio:9000', forcePathStyle: true, prefix: 'calls/', accessKeyId: 'AK', secretAccessKey: 'SK' });
    const aws = recordingsConfigFromEnv({ UPLOAD_VOICE_AGENT_CALL_RECORDINGS_TO_CLOUD: 'true', RECORDINGS_S3_BUCKET: 'b', RECORDINGS_S3_REGION: 'ap-south-1' }, '/d');
    assert.deepEqual(aws.cloud, { bucket: 'b', region: 'ap-south-1', forcePathStyle: false, prefix: 'recordings/' });
  });

  it('refuses incomplete cloud settings', () => {
    for (const env of [
      { UPLOAD_VOICE_AGENT_CALL_RECORDINGS_TO_CLOUD: 'true' },
      { UPLOAD_VOICE_AGENT_CALL_RECORDINGS_TO_CLOUD: 'maybe' },
      { UPLOAD_VOICE_AGENT_CALL_RECORDINGS_TO_CLOUD: 'true', RECORDINGS_S3_BUCKET: 'b', RECORDINGS_S3_ENDPOINT: 'not a url' },
      { UPLOAD_VOICE_AGENT_CALL_RECORDINGS_TO_CLOUD: 'true', RECORDINGS_S3_BUCKET: 'b', AWS_ACCESS_KEY_ID: 'only-one' },
    ]) {
      assert.throws(() => recordingsConfigFromEnv(env, '/d'), ConfigError, JSON.stringify(env));
    }
  });
});

describe('Range headers', () => {
  it('parses single byte ranges and ignores the rest', () => {
    assert.deepEqual(parseRangeHeader('bytes=0-99'), { start: 0, end: 99 });
    assert.deepEqual(parseRangeHeader('bytes=100-'), { start: 100 });
    assert.deepEqual(parseRangeHeader('bytes=-500'), { suffix: 500 });
    for (const h of [undefined, '', 'bytes=', 'bytes=-', 'bytes=5-1', 'items=0-1', 'bytes=0-1,4-5', 'bytes=a-b', 'bytes=99999999999999999-']) assert.equal(parseRangeHeader(h), undefined, String(h));
  });

  it('resolves against the size', () => {
    assert.deepEqual(resolveRange({ start: 10, end: 10_000 }, 100), { start: 10, end: 99 });
    assert.deepEqual(resolveRange({ suffix: 30 }, 100), { start: 70, end: 99 });
    assert.deepEqual(resolveRange({ suffix: 300 }, 100), { start: 0, end: 99 });
    assert.equal(resolveRange({ start: 100 }, 100), undefined);
    assert.equal(resolveRange({ suffix: 0 }, 100), undefined);
    assert.equal(resolveRange({ suffix: 5 }, 0), undefined);
  });
});

describe('local recording store', () => {
  let dir: string;
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dialer-rec-'));
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('saves atomically and opens whole files and ranges', async () => {
    const store = createRecordingStore({ dir: path.join(dir, 'a') }, PUBLIC);
    assert.ok(store instanceof LocalRecordingStore);
    const url = await store.save('CA0123456789abcdef', wav);
    assert.equal(url, `${PUBLIC}/leads/recording/CA0123456789abcdef`);
    assert.deepEqual(fs.readdirSync(path.join(dir, 'a')), ['CA0123456789abcdef.wav'], 'no temporary file is left behind');
    const whole = (await store.open('CA0123456789abcdef'))!;
    assert.equal(whole.size, wav.length);
    assert.equal(whole.contentType, 'audio/wav');
    assert.deepEqual(await bytes(whole), wav);
    const part = (await store.open('CA0123456789abcdef', { start: 40, end: 43 }))!;
    assert.equal(part.size, wav.length);
    assert.deepEqual(await bytes(part), wav.subarray(40, 44));
    const tail = (await store.open('CA0123456789abcdef', { start: wav.length - 3, end: wav.length + 100 }))!;
    assert.deepEqual(await bytes(tail), wav.subarray(wav.length - 3));
    const past = (await store.open('CA0123456789abcdef', { start: wav.length }))!;
    assert.equal(past.size, wav.length);
    assert.equal((await bytes(past)).length, 0);
    assert.equal(await store.open('CAunknown'), undefined);
  });

  it('replaces a recording whole, never leaving a half-written file', async () => {
    const store = new LocalRecordingStore(path.join(dir, 'b'), PUBLIC);
    await store.save('room-1.x', wav);
    const other = Buffer.alloc(wav.length * 2, 7);
    await Promise.all([store.save('room-1.x', other), store.save('room-1.x', wav)]);
    const got = await bytes((await store.open('room-1.x'))!);
    assert.ok(got.equals(wav) || got.equals(other));
    assert.deepEqual(fs.readdirSync(path.join(dir, 'b')), ['room-1.x.wav']);
  });

  it('refuses names that could leave the directory', async () => {
    const store = new LocalRecordingStore(path.join(dir, 'c'), PUBLIC);
    fs.mkdirSync(path.join(dir, 'c'));
    fs.writeFileSync(path.join(dir, 'secret.wav'), 'secret');
    for (const sid of ['../secret', '..', '.hidden', 'a/b', 'a\\b', '', 'x'.repeat(201), 'sp ace', '%2e%2e']) {
      await assert.rejects(store.save(sid, wav), InvalidCallSidError, sid);
      assert.equal(await store.open(sid), undefined, sid);
    }
    assert.equal(await store.open('../secret'), undefined);
  });
});

describe('S3 recording store', () => {
  let s3: S3Server;
  before(async () => {
    s3 = await startS3Server();
  });
  after(() => s3.close());

  const store = () =>
    createRecordingStore(
      { dir: '/unused', cloud: { bucket: s3.bucket, region: 'us-east-1', endpoint: s3.url, forcePathStyle: true, accessKeyId: 'AKIATEST', secretAccessKey: 'secret', prefix: 'recordings/' } },
      PUBLIC,
    );

  it('puts, gets, ranges and heads over the S3 protocol with SigV4', async () => {
    const st = store();
    assert.ok(st instanceof S3RecordingStore);
    const url = await st.save('CAabc', wav);
    assert.equal(url, `${PUBLIC}/leads/recording/CAabc`);
    const put = s3.requests.find((r) => r.method === 'PUT')!;
    assert.equal(put.path, `/${s3.bucket}/recordings/CAabc.wav`);
    assert.match(String(put.headers.authorization), /^AWS4-HMAC-SHA256 Credential=AKIATEST\//);
    assert.equal(s3.objects.get('recordings/CAabc.wav')?.contentType, 'audio/wav');
    assert.deepEqual(s3.objects.get('recordings/CAabc.wav')?.body, wav);

    const whole = (await st.open('CAabc'))!;
    assert.equal(whole.size, wav.length);
    assert.deepEqual(await bytes(whole), wav);

    const part = (await st.open('CAabc', { start: 44, end: 99 }))!;
    assert.equal(part.size, wav.length);
    assert.deepEqual(await bytes(part), wav.subarray(44, 100));
    assert.equal(s3.requests.at(-1)!.headers.range, 'bytes=44-99');

    const open = (await st.open('CAabc', { start: 100 }))!;
    assert.deepEqual(await bytes(open), wav.subarray(100));

    const past = (await st.open('CAabc', { start: wav.length + 5 }))!;
    assert.equal(past.size, wav.length);
    assert.equal((await bytes(past)).length, 0);
    assert.equal(s3.requests.at(-1)!.method, 'HEAD');

    assert.equal(await st.open('CAnone'), undefined);
    assert.equal(await st.open('CAnone', { start: 0, end: 1 }), undefined);
    assert.equal(await st.open('../etc/passwd'), undefined);
    await assert.rejects(st.save('../x', wav), InvalidCallSidError);
    for (const r of s3.requests) assert.match(String(r.headers.authorization), /^AWS4-HMAC-SHA256 /);
  });

  it('reports S3 errors (here a missing bucket) as failures', async () => {
    const bad = await startS3Server('other-bucket');
    try {
      const st = createRecordingStore({ dir: '/unused', cloud: { bucket: 'missing', region: 'us-east-1', endpoint: bad.url, forcePathStyle: true, accessKeyId: 'A', secretAccessKey: 'B', prefix: '' } }, PUBLIC);
      await assert.rejects(st.save('CA1', wav));
    } finally {
      await bad.close();
    }
  });
});
