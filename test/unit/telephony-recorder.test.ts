import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decodeWav } from '../../src/lib/audio.js';
import { CallRecorder } from '../../src/telephony/recorder.js';

const tone = (n: number, value: number) => new Int16Array(n).fill(value);

describe('call recorder', () => {
  it('mixes the caller and Dialer on one timeline, cutting what a barge-in cleared', () => {
    let now = 0;
    const rec = new CallRecorder(8000, () => now);
    // One second of the caller (100 at every sample), arriving as 20 ms frames.
    for (let i = 0; i < 50; i++) rec.heard(tone(160, 100));
    // Dialer queues 0.5 s of audio at t=0 and another 0.5 s behind it.
    rec.played(tone(4000, 1000));
    rec.played(tone(4000, 2000));
    // A barge-in at 0.75 s: the rest of the second clip was never heard.
    now = 750;
    rec.cleared();
    // After the clear, new audio starts at once (not after the dropped audio).
    rec.played(tone(800, 3000));
    const wav = decodeWav(rec.wav());
    assert.equal(wav.sampleRateHz, 8000);
    assert.equal(wav.pcm.length, 8000);
    assert.equal(wav.pcm[100], 1100);
    assert.equal(wav.pcm[5000], 2100);
    assert.equal(wav.pcm[6000], 3100);
    assert.equal(wav.pcm[6800], 100, 'the cleared audio is gone');
    assert.equal(rec.seconds, 1);
  });

  it('keeps Dialer audio played past the caller audio', () => {
    let now = 0;
    const rec = new CallRecorder(8000, () => now);
    rec.heard(tone(800, 10));
    now = 500;
    rec.played(tone(800, 500));
    const wav = decodeWav(rec.wav());
    assert.equal(wav.pcm.length, 4800);
    assert.equal(wav.pcm[100], 10);
    assert.equal(wav.pcm[2000], 0);
    assert.equal(wav.pcm[4400], 500);
  });

  it('ends where the call ended: audio queued past the hang-up was never heard and is not recorded', () => {
    let now = 0;
    const rec = new CallRecorder(8000, () => now);
    for (let i = 0; i < 50; i++) rec.heard(tone(160, 100));
    // A nine-second disclosure queued at once; the callee hangs up one second in.
    rec.played(tone(9 * 8000, 1000));
    now = 1000;
    rec.ended();
    // What the agent queues after the end (its goodbye) is not recorded either.
    rec.played(tone(800, 2000));
    const wav = decodeWav(rec.wav());
    assert.equal(wav.pcm.length, 8000);
    assert.equal(wav.pcm[7999], 1100);
    assert.equal(rec.seconds, 1);
  });

  it("keeps every sample of the caller's audio across its one-second blocks, whatever the frames' size", () => {
    const rec = new CallRecorder(8000, () => 0);
    const total = 8000 * 3 + 1234;
    const frames: Int16Array[] = [];
    for (let at = 0; at < total; at += 333) frames.push(Int16Array.from({ length: Math.min(333, total - at) }, (_, i) => ((at + i) % 30000) - 15000));
    for (const f of frames) rec.heard(f);
    // The recorder keeps copies: the caller's frames may be reused by whoever decoded them.
    for (const f of frames) f.fill(0);
    const wav = decodeWav(rec.wav());
    assert.equal(wav.pcm.length, total);
    for (let i = 0; i < total; i++) if (wav.pcm[i] !== (i % 30000) - 15000) assert.fail(`sample ${i} is ${wav.pcm[i]}`);
    assert.equal(rec.seconds, total / 8000);
  });
});
