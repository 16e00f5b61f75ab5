import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { synthesize } from '../../src/lib/speech.js';
import { SileroVAD } from '../../src/providers/vad/index.js';

const silence = (ms: number) => new Int16Array((16000 * ms) / 1000);
function join(parts: Int16Array[]): Int16Array {
  const out = new Int16Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

async function eventsOf(audio: Int16Array, options: Parameters<SileroVAD['open']>[0] = {}) {
  const stream = await new SileroVAD().open(options);
  const events = [];
  for (let i = 0; i < audio.length; i += 320) events.push(...(await stream.push(audio.subarray(i, i + 320))));
  stream.close();
  return events;
}

describe('Silero VAD', () => {
  for (const rate of [16000, 8000]) {
    it(`finds two phrases in real speech at ${rate} Hz, at about the right times, in 20 ms pushes`, async () => {
      const one = await synthesize('Hello, this is a test of the voice detector.', { sampleRateHz: rate });
      const two = await synthesize('And here is a second sentence.', { sampleRateHz: rate });
      const quiet = (ms: number) => new Int16Array((rate * ms) / 1000);
      const audio = join([quiet(500), one, quiet(1200), two, quiet(1000)]);
      const vad = new SileroVAD();
      assert.ok(vad.sampleRatesHz.includes(rate));
      const stream = await vad.open({ minSilenceMs: 500 }, rate);
      const events = [];
      for (let i = 0; i < audio.length; i += rate / 50) events.push(...(await stream.push(audio.subarray(i, i + rate / 50))));
      assert.deepEqual(events.map((e) => e.type), ['speech_start', 'speech_end', 'speech_start', 'speech_end']);
      const oneEndMs = 500 + (one.length * 1000) / rate;
      assert.ok(Math.abs(events[0]!.atMs - 500) < 250, `first start at ${events[0]!.atMs}`);
      assert.ok(Math.abs(events[1]!.atMs - oneEndMs) < 400, `first end at ${events[1]!.atMs}, speech ended at ${oneEndMs}`);
      assert.ok(Math.abs(events[2]!.atMs - (oneEndMs + 1200)) < 250, `second start at ${events[2]!.atMs}`);
    });
  }

  it('refuses a sample rate the model does not take', async () => {
    await assert.rejects(new SileroVAD().open({}, 44100), /8000|16000/);
  });

  it('stays quiet on silence, on low noise, and on a click shorter than the minimum speech', async () => {
    const stream = await new SileroVAD().open();
    const noise = Int16Array.from({ length: 16000 * 2 }, () => Math.round((Math.random() - 0.5) * 200));
    const click = join([silence(300), Int16Array.from({ length: 1600 }, (_, i) => Math.round(Math.sin(i / 3) * 12000)), silence(800)]);
    // Line hiss loud enough (rms about 300) that the model runs on it rather than the silence gate.
    const hiss = Int16Array.from({ length: 16000 * 2 }, () => Math.round((Math.random() - 0.5) * 1040));
    const events = [...(await stream.push(silence(1000))), ...(await stream.push(noise)), ...(await stream.push(hiss)), ...(await stream.push(click))];
    assert.deepEqual(events, []);
  });

  it('respects its options: a long minSilenceMs bridges the pause, a long minSpeechMs hears nothing', async () => {
    const one = await synthesize('Hello, this is a test of the voice detector.', { sampleRateHz: 16000 });
    const two = await synthesize('And here is a second sentence.', { sampleRateHz: 16000 });
    const audio = join([silence(500), one, silence(1200), two, silence(2500)]);
    assert.deepEqual((await eventsOf(audio, { minSilenceMs: 2000 })).map((e) => e.type), ['speech_start', 'speech_end']);
    assert.deepEqual(await eventsOf(audio, { minSpeechMs: 10_000 }), []);
    const strict = await eventsOf(audio, { startThreshold: 1.01 });
    assert.deepEqual(strict, [], 'a start threshold no probability reaches');
  });

  it('ignores a spoken "uh" shorter than minSpeechMs, and hears it when the minimum is lower', async () => {
    const uh = await synthesize('Uh.', { sampleRateHz: 16000 }); // about 100 ms that Silero calls speech
    const audio = join([silence(500), uh, silence(1500)]);
    assert.deepEqual(await eventsOf(audio), [], 'default minSpeechMs 200');
    const loose = await eventsOf(audio, { minSpeechMs: 32, minSilenceMs: 300 });
    assert.deepEqual(loose.map((e) => e.type), ['speech_start', 'speech_end']);
  });

  it('takes new settings mid-stream (a template node with its own end-of-speech silence)', async () => {
    const one = await synthesize('Hello there.', { sampleRateHz: 16000 });
    const stream = await new SileroVAD().open();
    const before = await stream.push(new Int16Array(16000 * 0.3));
    stream.update({ minSpeechMs: 60_000 });
    const events = [...before, ...(await stream.push(one)), ...(await stream.push(new Int16Array(16000)))];
    assert.deepEqual(events, [], 'speech shorter than the new minimum counts for nothing');
  });

  it('shares one model across streams, each with its own state', async () => {
    const phrase = await synthesize('One two three.', { sampleRateHz: 16000 });
    const audio = join([silence(300), phrase, silence(1000)]);
    const [a, b] = await Promise.all([eventsOf(audio), eventsOf(audio)]);
    assert.deepEqual(a, b);
    assert.deepEqual(a.map((e) => e.type), ['speech_start', 'speech_end']);
  });

  it('hears the same with the native and the WebAssembly ONNX Runtime', async () => {
    const phrase = await synthesize('One two three.', { sampleRateHz: 16000 });
    const audio = join([silence(300), phrase, silence(1000)]);
    const run = async (runtime: 'native' | 'wasm') => {
      const vad = new SileroVAD({ runtime });
      assert.equal(await vad.runtimeInUse(), runtime);
      const stream = await vad.open();
      const events = [];
      for (let i = 0; i < audio.length; i += 320) events.push(...(await stream.push(audio.subarray(i, i + 320))));
      return events;
    };
    const [native, wasm] = [await run('native'), await run('wasm')];
    assert.deepEqual(native.map((e) => e.type), ['speech_start', 'speech_end']);
    assert.deepEqual(native, wasm);
  });
});
