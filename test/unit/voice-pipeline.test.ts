/**
 * Frame in, frames out: the pipeline's priorities and the processors that need no AI service.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { frame, type Direction, type Frame } from '../../src/voice/frames.js';
import { ConversationMetrics } from '../../src/voice/metrics.js';
import { FrameProcessor, PassThrough, Pipeline } from '../../src/voice/pipeline.js';
import { TurnTakingProcessor } from '../../src/voice/processors/turns.js';
import { resolveTurnTaking } from '../../src/voice/turns/settings.js';
import { OutputProcessor } from '../../src/voice/processors/output.js';
import { SentenceProcessor } from '../../src/voice/processors/speak.js';
import { SttProcessor } from '../../src/voice/processors/listen.js';
import type { STT, SttEvent, SttOpenOptions } from '../../src/voice/services.js';
import { EventQueue } from '../../src/providers/queue.js';
import type { CallIO, PlayResult } from '../../src/voice/agent.js';

const tick = (ms = 0) => new Promise((r) => setTimeout(r, ms));

/** Collects what leaves the pipeline, by direction. */
function harness(processors: FrameProcessor[]) {
  const down: Frame[] = [];
  const up: Frame[] = [];
  const pipeline = new Pipeline(processors, { sink: (f, d) => (d === 'down' ? down : up).push(f) });
  return { pipeline, down, up };
}

/** A processor that takes 20 ms per data frame, like a slow service. */
class Slow extends FrameProcessor {
  readonly name = 'slow';
  readonly seen: string[] = [];
  protected async process(f: Frame, direction: Direction): Promise<void> {
    this.seen.push(f.kind);
    if (f.kind === 'agent_text') await tick(20);
    this.push(f, direction);
  }
}

describe('pipeline', () => {
  it('lets system frames jump the queue and drops queued data on an interruption, keeping control frames', async () => {
    const slow = new Slow();
    const { pipeline, down } = harness([new PassThrough(), slow]);
    for (let i = 0; i < 5; i++) pipeline.send(frame({ kind: 'agent_text' as const, text: `t${i}`, turn: 1 }));
    pipeline.send(frame({ kind: 'turn_done' as const, turn: 1 }));
    await tick(5);
    pipeline.send(frame({ kind: 'interruption' as const }));
    await tick(60);
    const kinds = down.map((f) => (f.kind === 'agent_text' ? f.text : f.kind));
    assert.deepEqual(kinds, ['interruption', 't0', 'turn_done'], 'the interruption overtook t0 in hand; t1-t4 were dropped; turn_done kept');
  });

  it('passes upstream frames at once, even while a downstream frame is in hand', async () => {
    const slow = new Slow();
    const { pipeline, up } = harness([new PassThrough(), slow, new PassThrough()]);
    pipeline.send(frame({ kind: 'agent_text' as const, text: 'long', turn: 1 }));
    await tick(2);
    pipeline.send(frame({ kind: 'bot_started_speaking' as const }), 'up');
    await tick(1);
    assert.deepEqual(up.map((f) => f.kind), ['bot_started_speaking']);
  });
});

describe('sentences', () => {
  it('a reply that changes language mid-way is cut there: each sentence goes to the voice of its language', async () => {
    const { pipeline, down } = harness([new SentenceProcessor()]);
    pipeline.send(frame({ kind: 'agent_text' as const, text: 'One moment', turn: 1, language: 'en-US' }));
    pipeline.send(frame({ kind: 'agent_text' as const, text: 'Claro. Su entrega', turn: 1, language: 'es-ES' }));
    pipeline.send(frame({ kind: 'agent_text' as const, text: ' es el viernes.', turn: 1, language: 'es-ES' }));
    pipeline.send(frame({ kind: 'turn_done' as const, turn: 1 }));
    await tick();
    assert.deepEqual(
      down.filter((f) => f.kind === 'speak').map((f) => [(f as { text: string }).text, (f as { language?: string }).language]),
      [['One moment', 'en-US'], ['Claro.', 'es-ES'], ['Su entrega es el viernes.', 'es-ES']],
    );
  });

  it('speaks each sentence as soon as it is complete and the rest at the end of the turn', async () => {
    const { pipeline, down } = harness([new SentenceProcessor()]);
    for (const piece of ['Hello Ana', '! Your order 3.5 kg', ' is ready. Shall I', ' confirm it']) pipeline.send(frame({ kind: 'agent_text' as const, text: piece, turn: 1 }));
    pipeline.send(frame({ kind: 'turn_done' as const, turn: 1 }));
    await tick();
    assert.deepEqual(
      down.filter((f) => f.kind === 'speak').map((f) => (f as { text: string }).text),
      ['Hello Ana!', 'Your order 3.5 kg is ready.', 'Shall I confirm it'],
    );
  });

  it("first clause: a reply's first clause is spoken the moment its comma arrives, not a token later; numbers and single words are not cut", async () => {
    const { pipeline, down } = harness([new SentenceProcessor(true)]);
    const spoken = () => down.filter((f) => f.kind === 'speak').map((f) => (f as { text: string }).text);
    pipeline.send(frame({ kind: 'agent_text' as const, text: 'Thank', turn: 1 }));
    pipeline.send(frame({ kind: 'agent_text' as const, text: ' you,', turn: 1 }));
    await tick();
    assert.deepEqual(spoken(), ['Thank you,'], 'before the next token');
    for (const piece of [' I have', ' noted it, thanks.', ' Bye']) pipeline.send(frame({ kind: 'agent_text' as const, text: piece, turn: 1 }));
    pipeline.send(frame({ kind: 'turn_done' as const, turn: 1 }));
    // Another reply: "1," of "1,000" is no clause end.
    for (const piece of ['Your total is 1,', '000 dollars, paid.']) pipeline.send(frame({ kind: 'agent_text' as const, text: piece, turn: 2 }));
    // And another: "Well," alone is too short.
    for (const piece of ['Well,', ' okay.']) pipeline.send(frame({ kind: 'agent_text' as const, text: piece, turn: 3 }));
    pipeline.send(frame({ kind: 'turn_done' as const, turn: 3 }));
    pipeline.send(frame({ kind: 'turn_done' as const, turn: 2 }));
    await tick();
    assert.deepEqual(spoken(), ['Thank you,', 'I have noted it, thanks.', 'Bye', 'Your total is 1,000 dollars,', 'paid.', 'Well, okay.']);
  });
});

describe('turns', () => {
  it('vad mode: ends the turn when the VAD heard silence and the STT gave its final words, in either order', async () => {
    const { pipeline, down } = harness([new TurnTakingProcessor({ settings: resolveTurnTaking({ mode: 'vad' }, undefined), finalWaitMs: 200 })]);
    pipeline.send(frame({ kind: 'user_started_speaking' as const }));
    pipeline.send(frame({ kind: 'transcription' as const, text: 'yes', final: false }));
    pipeline.send(frame({ kind: 'transcription' as const, text: 'yes please', final: true }));
    pipeline.send(frame({ kind: 'user_stopped_speaking' as const }));
    await tick();
    // Final after the stop.
    pipeline.send(frame({ kind: 'user_started_speaking' as const }));
    pipeline.send(frame({ kind: 'user_stopped_speaking' as const }));
    await tick(20);
    pipeline.send(frame({ kind: 'transcription' as const, text: 'tomorrow', final: true }));
    await tick();
    // No final at all: the interim words after the wait.
    pipeline.send(frame({ kind: 'user_started_speaking' as const }));
    pipeline.send(frame({ kind: 'transcription' as const, text: 'maybe', final: false }));
    pipeline.send(frame({ kind: 'user_stopped_speaking' as const }));
    await tick(260);
    assert.deepEqual(down.filter((f) => f.kind === 'user_turn').map((f) => (f as { text: string }).text), ['yes please', 'tomorrow', 'maybe']);
  });

  it('a turn carries the language the speech-to-text heard it in (its last final), for the agent to switch to', async () => {
    const { pipeline, down } = harness([new TurnTakingProcessor({ settings: resolveTurnTaking({ mode: 'vad' }, undefined), finalWaitMs: 200 })]);
    pipeline.send(frame({ kind: 'user_started_speaking' as const }));
    pipeline.send(frame({ kind: 'transcription' as const, text: 'Hola,', final: true, language: 'en' }));
    pipeline.send(frame({ kind: 'transcription' as const, text: 'buenos días.', final: true, language: 'es' }));
    pipeline.send(frame({ kind: 'user_stopped_speaking' as const }));
    await tick();
    assert.deepEqual(down.filter((f) => f.kind === 'user_turn').map((f) => [(f as { text: string }).text, (f as { language?: string }).language]), [['Hola, buenos días.', 'es']]);
  });
});

/** The transport side of a call: plays in 'real time' (resolves when told), clears on demand. */
function fakeIO() {
  const played: Array<{ pcm: Int16Array; resolve: (r: PlayResult) => void }> = [];
  let clears = 0;
  const io: CallIO = {
    sampleRateHz: 8000,
    signal: new AbortController().signal,
    play: (pcm) => new Promise((resolve) => played.push({ pcm, resolve })),
    clear: () => {
      clears++;
      for (const p of played.splice(0)) p.resolve('cleared');
    },
    hangup: () => undefined,
    transfer: async () => undefined,
    onAudio: () => undefined,
    onDtmf: () => undefined,
  };
  return { io, played, clears: () => clears };
}

describe('output', () => {
  it('reports what was heard when a barge-in cuts the reply, and ends only after the last words were heard', async () => {
    const { io, played, clears } = fakeIO();
    const events: string[] = [];
    const output = new OutputProcessor(io, new ConversationMetrics(), {
      spoke: (_t, text) => events.push(`spoke ${text}`),
      ended: (outcome) => events.push(`ended ${outcome}`),
      transferred: (to) => events.push(`transferred ${to}`),
    });
    const { pipeline, up } = harness([output]);
    const audio = (text: string, last: boolean, turn = 1) => frame({ kind: 'output_audio' as const, pcm: new Int16Array(160), sampleRateHz: 8000, text, turn, last });
    pipeline.send(audio('One.', true));
    pipeline.send(audio('Two', false));
    pipeline.send(audio('Two', true));
    await tick();
    assert.equal(up[0]?.kind, 'bot_started_speaking');
    played.shift()!.resolve('played'); // "One." heard
    await tick();
    pipeline.send(frame({ kind: 'interruption' as const }));
    await tick();
    assert.equal(clears(), 1);
    const cut = up.find((f) => f.kind === 'agent_interrupted') as { spoken: string } | undefined;
    assert.equal(cut?.spoken, 'One.');
    assert.ok(up.some((f) => f.kind === 'bot_stopped_speaking'));

    pipeline.send(audio('Bye.', true, 2));
    pipeline.send(frame({ kind: 'agent_action' as const, action: { type: 'end' as const, outcome: 'confirmed' }, turn: 2 }));
    await tick();
    assert.ok(!events.includes('ended confirmed'), 'not before the goodbye was heard');
    played.shift()!.resolve('played');
    await tick();
    assert.deepEqual(events, ['spoke One.', 'spoke Bye.', 'ended confirmed']);
  });
});

describe('speech-to-text language', () => {
  /** A speech-to-text that keeps how each stream was opened; each stream says one final, naming a language or not. */
  function recordingStt(named: string | undefined) {
    const opened: Array<Omit<SttOpenOptions, 'signal'>> = [];
    const stt: STT = {
      label: 'recording',
      interimResults: false,
      sampleRatesHz: [8000],
      open: ({ signal: _signal, ...options }) => {
        opened.push(options);
        const events = new EventQueue<SttEvent>();
        return {
          write: () => undefined,
          endSegment: () => events.put({ type: 'final', text: 'hola', ...(named ? { language: named } : {}) }),
          events,
          close: async () => events.end(),
        };
      },
    };
    return { stt, opened };
  }

  it("a switch reopens the stream in the new language; a stream that names its words' language goes on", async () => {
    for (const [named, streams] of [[undefined, ['en-US', 'es-ES']], ['es', ['en-US']]] as const) {
      const { stt, opened } = recordingStt(named);
      const processor = new SttProcessor(stt, (err) => assert.fail(String(err)), 8000, { language: 'en-US', detect: ['en-US', 'es-ES'] });
      const { pipeline, down } = harness([processor]);
      pipeline.send(frame({ kind: 'start' as const }));
      pipeline.send(frame({ kind: 'user_stopped_speaking' as const }));
      for (let i = 0; i < 100 && !down.some((f) => f.kind === 'transcription'); i++) await tick(5);
      processor.switchLanguage('es-ES');
      assert.deepEqual(opened.map((o) => o.language), streams);
      assert.deepEqual(opened[0]!.detect, ['en-US', 'es-ES']);
      pipeline.send(frame({ kind: 'end' as const, reason: 'agent' as const }));
    }
  });
});
