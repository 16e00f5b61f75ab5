/**
 * The agent's audio on its way out: the TTS processor slices a long network read, sends the first
 * slice at once and the rest in pieces, and waits on the shared pacer instead of making all of it
 * at once; the pacer lets go at its time or at once when the turn is cut.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { frame, type Frame, type OutputAudioFrame } from '../../src/voice/frames.js';
import { ConversationMetrics } from '../../src/voice/metrics.js';
import { pacer } from '../../src/voice/pacer.js';
import { Pipeline } from '../../src/voice/pipeline.js';
import { LeadingSilence, TtsProcessor } from '../../src/voice/processors/speak.js';
import type { TTS } from '../../src/voice/services.js';

/** A TTS that hands over `seconds` of 24 kHz audio in one chunk, as a fast local server's read does. */
function oneReadTts(seconds: number): TTS {
  return {
    label: 'one-read',
    sampleRateHz: 24000,
    async *synthesize() {
      yield Int16Array.from({ length: 24000 * seconds }, (_, i) => Math.round(8000 * Math.sin(i / 9)));
    },
  };
}

function run(tts: TTS) {
  const out: OutputAudioFrame[] = [];
  const others: Frame[] = [];
  const metrics = new ConversationMetrics();
  const pipeline = new Pipeline([new TtsProcessor(tts, 8000, metrics, (err) => assert.fail(String(err)))], {
    sink: (f) => (f.kind === 'output_audio' ? out.push(f) : others.push(f)),
  });
  return { pipeline, out, others, metrics };
}

/** Until the processor stops sending: it waits on the pacer for the playout to catch up. */
async function heldBack(out: OutputAudioFrame[]): Promise<void> {
  let before = -1;
  while (out.length !== before) {
    before = out.length;
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('agent audio pacing', () => {
  it('sends a long read as a first 40 ms slice, then pieces of about 200 ms, the last one marked, nothing lost', async () => {
    const { pipeline, out } = run(oneReadTts(1));
    pipeline.send(frame({ kind: 'start' as const }));
    pipeline.send(frame({ kind: 'speak' as const, text: 'Hello there.', turn: 1 }));
    while (!out.some((f) => f.last)) await new Promise((r) => setTimeout(r, 20));
    // The first slice (40 ms, 320 samples at 8 kHz, less the resampler's look-ahead) goes out on its own.
    assert.ok(out[0]!.pcm.length > 200 && out[0]!.pcm.length <= 320, `first slice of ${out[0]!.pcm.length} samples`);
    for (const f of out.slice(1, -1)) assert.ok(f.pcm.length >= 1600 && f.pcm.length < 1600 + 320, `a piece of ${f.pcm.length} samples`);
    assert.deepEqual(out.map((f) => f.last), [...out.slice(0, -1).map(() => false), true]);
    const total = out.reduce((n, f) => n + f.pcm.length, 0);
    assert.ok(Math.abs(total - 8000) <= 40, `${total} samples of 8 kHz for one second`);
  });

  it('stops making audio when the turn is interrupted while it waits for its playout', async () => {
    const { pipeline, out } = run(oneReadTts(5));
    pipeline.send(frame({ kind: 'start' as const }));
    pipeline.send(frame({ kind: 'speak' as const, text: 'A long story.', turn: 1 }));
    await heldBack(out); // well short of the five seconds
    const sent = out.reduce((n, f) => n + f.pcm.length, 0);
    assert.ok(sent < 8000 * 5, `held back at ${sent} samples`);
    pipeline.send(frame({ kind: 'interruption' as const }));
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(out.filter((f) => f.last).length, 0, 'the cut sentence is not finished');
  });

  it('counts the 20 ms frames it hands over, and as late those that come after the playout ran dry within a reply', async () => {
    const { pipeline, out, metrics } = run(oneReadTts(2));
    pipeline.send(frame({ kind: 'start' as const }));
    pipeline.send(frame({ kind: 'speak' as const, text: 'Two seconds.', turn: 1 }));
    // Once it is held back by the pacer, hold the event loop for longer than the 500 ms it keeps
    // ahead: the next piece comes after the audio before it has played.
    await heldBack(out);
    assert.equal(metrics.outputFramesLate, 0, 'nothing late while the event loop is free');
    const until = performance.now() + 900;
    while (performance.now() < until);
    while (!out.some((f) => f.last)) await new Promise((r) => setTimeout(r, 20));
    const frames = Math.ceil(out.reduce((n, f) => n + f.pcm.length, 0) / 160);
    assert.ok(Math.abs(metrics.outputFrames - frames) <= out.length, `${metrics.outputFrames} frames counted, ${frames} sent`);
    assert.ok(metrics.outputFramesLate > 0 && metrics.outputFramesLate <= 20, `${metrics.outputFramesLate} late`);
    // A new reply's first audio is not late, however long after the last one it comes.
    const late = metrics.outputFramesLate;
    pipeline.send(frame({ kind: 'speak' as const, text: 'Next turn.', turn: 2 }));
    while (out.filter((f) => f.last).length < 2) await new Promise((r) => setTimeout(r, 20));
    assert.equal(metrics.outputFramesLate, late);
  });

  it('keeps ahead of the playout on a busy event loop: with less than a piece queued it does not wait its turn', async () => {
    // Other work holds each turn of the event loop for 60 ms (other calls, an import): a slice
    // (40 ms of audio) a turn would make the audio slower than it plays.
    let busy = true;
    const hog = () => {
      const until = performance.now() + 60;
      while (performance.now() < until);
      if (busy) setImmediate(hog);
    };
    const { pipeline, out, metrics } = run(oneReadTts(3));
    pipeline.send(frame({ kind: 'start' as const }));
    pipeline.send(frame({ kind: 'speak' as const, text: 'Three seconds.', turn: 1 }));
    setImmediate(hog);
    try {
      while (!out.some((f) => f.last)) await new Promise((r) => setTimeout(r, 20));
    } finally {
      busy = false;
    }
    const total = out.reduce((n, f) => n + f.pcm.length, 0);
    assert.ok(Math.abs(total - 3 * 8000) <= 40, `${total} samples of 8 kHz for three seconds`);
    assert.equal(metrics.outputFramesLate, 0, 'no gap in the agent\'s speech');
  });

  it('the pacer resolves at its time, and at once for an aborted signal', async () => {
    await pacer.until(performance.now() + 15);
    const abort = new AbortController();
    const waiting = pacer.until(performance.now() + 3_600_000, abort.signal);
    abort.abort();
    await waiting;
    await pacer.until(performance.now() + 3_600_000, abort.signal);
  });

  it("skips a reply's leading silence (keeping 15 ms before its first sound), only at the reply's start, and at most 400 ms of it", async () => {
    const tone = (n: number) => Int16Array.from({ length: n }, (_, i) => Math.round(8000 * Math.cos(i / 9)));
    const quiet = (n: number) => Int16Array.from({ length: n }, (_, i) => (i % 2 ? 20 : -20));
    const lead = new LeadingSilence(8000);
    // 200 ms of quiet over two reads, then sound: the quiet is dropped but for the last 15 ms before the sound.
    assert.equal(lead.trim(quiet(800)).length, 0);
    const second = Int16Array.from([...quiet(800), ...tone(800)]);
    assert.equal(lead.trim(second).length, 120 + 800);
    // After the first sound, quiet is the speech's own pause and is kept.
    assert.equal(lead.trim(quiet(800)).length, 800);
    // A reply that is quiet for longer than 400 ms is the TTS's meaning: the rest is kept.
    const long = new LeadingSilence(8000);
    assert.equal(long.trim(quiet(4000)).length, 800);

    const { pipeline, out } = run({ label: 'quiet-start', sampleRateHz: 8000, async *synthesize() { yield Int16Array.from([...quiet(1600), ...tone(1600)]); } });
    pipeline.send(frame({ kind: 'start' as const }));
    pipeline.send(frame({ kind: 'speak' as const, text: 'Hello.', turn: 1 }));
    await heldBack(out);
    const played = out.reduce((n, f) => n + f.pcm.length, 0);
    assert.equal(played, 120 + 1600, 'the 200 ms of leading quiet is not played, but 15 ms before the sound is');
    pipeline.send(frame({ kind: 'end' as const, reason: 'agent' as const }));
  });

  it('a held (speculative) reply plays what was made once released, and the rest as the TTS sends it', async () => {
    let more!: () => void;
    const rest = new Promise<void>((resolve) => (more = resolve));
    const tone = (n: number) => Int16Array.from({ length: n }, (_, i) => Math.round(8000 * Math.sin(i / 9)));
    const { pipeline, out } = run({
      label: 'slow-rest',
      sampleRateHz: 8000,
      async *synthesize() {
        yield tone(800);
        await rest;
        yield tone(800);
      },
    });
    pipeline.send(frame({ kind: 'start' as const }));
    pipeline.send(frame({ kind: 'turn_hold' as const, turn: 2 }));
    pipeline.send(frame({ kind: 'speak' as const, text: 'Sure, I can do that.', turn: 2 }));
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(out.length, 0, 'held until the verdict');
    pipeline.send(frame({ kind: 'turn_release' as const, turn: 2 }));
    await heldBack(out);
    const before = out.reduce((n, f) => n + f.pcm.length, 0);
    assert.ok(before > 0 && before <= 800, `the first words play while the TTS is still making the rest (${before} samples)`);
    more();
    await heldBack(out);
    assert.equal(out.reduce((n, f) => n + f.pcm.length, 0), 1600);
    assert.equal(out.at(-1)!.last, true);
    pipeline.send(frame({ kind: 'end' as const, reason: 'agent' as const }));
  });
});
