import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { synthesize } from '../../src/lib/audio.js';
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

describe('Silero VAD', () => {
  it('finds two phrases in real speech, at about the right times, in 20 ms pushes', async () => {
    const one = await synthesize('Hello, this is a test of the voice detector.', { sampleRateHz: 16000 });
    const two = await synthesize('And here is a second sentence.', { sampleRateHz: 16000 });
    const audio = join([silence(500), one, silence(1200), two, silence(1000)]);
    const stream = await new SileroVAD().open({ minSilenceMs: 500 });
    const events = [];
    for (let i = 0; i < audio.length; i += 320) events.push(...(await stream.push(audio.subarray(i, i + 320))));
    assert.deepEqual(events.map((e) => e.type), ['speech_start', 'speech_end', 'speech_start', 'speech_end']);
    const oneEndMs = 500 + (one.length / 16);
    assert.ok(Math.abs(events[0]!.atMs - 500) < 250, `first start at ${events[0]!.atMs}`);
    assert.ok(Math.abs(events[1]!.atMs - oneEndMs) < 400, `first end at ${events[1]!.atMs}, speech ended at ${oneEndMs}`);
    assert.ok(Math.abs(events[2]!.atMs - (oneEndMs + 1200)) < 250, `second start at ${events[2]!.atMs}`);
  });

  it('stays quiet on silence, on low noise, and on a click shorter than the minimum speech', async () => {
    const stream = await new SileroVAD().open();
    const noise = Int16Array.from({ length: 16000 * 2 }, () => Math.round((Math.random() - 0.5) * 200));
    const click = join([silence(300), Int16Array.from({ length: 1600 }, (_, i) => Math.round(Math.sin(i / 3) * 12000)), silence(800)]);
    const events = [...(await stream.push(silence(1000))), ...(await stream.push(noise)), ...(await stream.push(click))];
    assert.deepEqual(events, []);
  });
});
