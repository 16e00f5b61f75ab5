/**
 * Beep detection on synthesised audio: a voicemail greeting (espeak-ng speech) followed by a tone,
 * with line noise under all of it and the line's mu-law coding, is heard at the tone's end; ordinary
 * speech, short blips, keypad tones and tones outside the band are not beeps.
 */
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { decodeMulaw, encodeMulaw } from '../../src/lib/audio.js';
import { synthesize } from '../../src/lib/speech.js';
import { prng } from '../../src/lib/random.js';
import { dtmfTones } from '../../src/lib/tones.js';
import { BeepDetector } from '../../src/voice/voicemail/beep.js';

const RATE = 8000;
const ms = (n: number) => Math.round((n * RATE) / 1000);

function tone(hz: number, durationMs: number, amplitude = 8000): Int16Array {
  const out = new Int16Array(ms(durationMs));
  for (let i = 0; i < out.length; i++) out[i] = Math.round(amplitude * Math.sin((2 * Math.PI * hz * i) / RATE));
  return out;
}

function concat(...parts: Int16Array[]): Int16Array {
  const out = new Int16Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) (out.set(p, at), (at += p.length));
  return out;
}

/** White line noise at `level` RMS added to everything, then the line's mu-law coding. */
function line(pcm: Int16Array, level: number, seed: number): Int16Array {
  const random = prng(seed);
  const noisy = new Int16Array(pcm.length);
  for (let i = 0; i < pcm.length; i++) {
    // Sum of uniforms: roughly Gaussian, unit variance.
    const g = (random() + random() + random() + random() - 2) * Math.sqrt(3);
    noisy[i] = Math.max(-32768, Math.min(32767, Math.round(pcm[i]! + g * level)));
  }
  return decodeMulaw(encodeMulaw(noisy));
}

/** Feeds audio as a line delivers it: 20 ms frames. */
function detect(pcm: Int16Array, frameMs = 20) {
  const detector = new BeepDetector({ sampleRateHz: RATE });
  const step = ms(frameMs);
  for (let at = 0; at < pcm.length; at += step) detector.push(pcm.subarray(at, at + step));
  return detector.beep;
}

const SENTENCES = [
  'Hi, you have reached Ana Lopez. I cannot take your call right now.',
  'Hello? Yes, this is me. Who is calling, please?',
  'Please do not call me again. Remove my number from your list.',
  'Oooh, well, hmmm, let me see, my order number is four four two.',
  'Thank you for calling. Your call is important to us. Please hold the line.',
];

let speech: Int16Array[];
let slowSpeech: Int16Array;
let greeting: Int16Array;

before(async () => {
  speech = await Promise.all(SENTENCES.map((s) => synthesize(s, { sampleRateHz: RATE })));
  slowSpeech = await synthesize('Sooo, wellll, I am thinking about it. Yesss.', { sampleRateHz: RATE, wordsPerMinute: 90 });
  greeting = await synthesize('Hi, you have reached Ana. Please leave a message after the tone.', { sampleRateHz: RATE });
});

describe('the beep after a voicemail greeting', () => {
  for (const [hz, beepMs] of [[1000, 600], [440, 300], [850, 1500], [1400, 1000], [1950, 450]] as const) {
    it(`is heard at the end of a ${hz} Hz, ${beepMs} ms tone after the greeting, in line noise`, () => {
      const silence = new Int16Array(ms(400));
      const audio = line(concat(greeting, silence, tone(hz, beepMs), new Int16Array(ms(1000))), 200, hz);
      const beep = detect(audio);
      assert.ok(beep, 'a beep was heard');
      const toneStart = ((greeting.length + silence.length) * 1000) / RATE;
      assert.ok(Math.abs(beep.startMs - toneStart) <= 40, `started at ${beep.startMs} ms, the tone at ${toneStart}`);
      assert.ok(Math.abs(beep.endMs - (toneStart + beepMs)) <= 40, `ended at ${beep.endMs} ms, the tone at ${toneStart + beepMs}`);
      assert.ok(Math.abs(beep.frequencyHz - hz) <= 20, `${beep.frequencyHz} Hz`);
    });
  }

  it('is heard when speech runs right up to the tone and the frames are not 20 ms', () => {
    const audio = line(concat(greeting, tone(1000, 500), speech[1]!), 300, 7);
    const beep = detect(audio, 30);
    assert.ok(beep);
    const end = ((greeting.length + ms(500)) * 1000) / RATE;
    assert.ok(Math.abs(beep.endMs - end) <= 40, `${beep.endMs} vs ${end}`);
  });

  it('survives a dropped frame in the middle of the tone', () => {
    const beepTone = tone(1000, 800);
    beepTone.fill(0, ms(400), ms(420));
    const beep = detect(line(concat(greeting, beepTone, new Int16Array(ms(500))), 150, 9));
    assert.ok(beep);
    assert.ok(beep.endMs - beep.startMs >= 760, JSON.stringify(beep));
  });

  it('is reported at the longest length when the tone does not stop', () => {
    const beep = detect(line(concat(greeting, tone(700, 4000)), 100, 3));
    assert.ok(beep);
    assert.equal(beep.endMs - beep.startMs, 2500);
  });
});

describe('no beep', () => {
  it('in ordinary speech, clean or over a noisy line, at any pace', () => {
    for (const [i, pcm] of [...speech, slowSpeech].entries()) {
      assert.equal(detect(pcm), undefined, `clean sentence ${i}`);
      assert.equal(detect(line(pcm, 250, i)), undefined, `noisy sentence ${i}`);
    }
    assert.equal(detect(line(concat(...speech, slowSpeech), 100, 99)), undefined, 'all of it at once');
  });

  it('in line noise or silence alone', () => {
    assert.equal(detect(line(new Int16Array(ms(5000)), 800, 1)), undefined);
    assert.equal(detect(new Int16Array(ms(5000))), undefined);
  });

  it('for a blip shorter than a beep, keypad tones, or a tone outside 400-2,000 Hz', () => {
    assert.equal(detect(line(concat(greeting, tone(1000, 160), speech[0]!), 150, 4)), undefined, 'a 160 ms blip');
    assert.equal(detect(line(dtmfTones('123#456*', { sampleRateHz: RATE, toneMs: 400, gapMs: 100 }), 150, 5)), undefined, 'keypad tones');
    assert.equal(detect(line(concat(greeting, tone(250, 800)), 100, 6)), undefined, '250 Hz');
    assert.equal(detect(line(concat(greeting, tone(2800, 800)), 100, 6)), undefined, '2,800 Hz');
  });
});
