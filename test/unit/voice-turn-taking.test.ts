/**
 * Turn-taking: the backchannel filter, each end-of-turn rule, and frames in / frames out through
 * the pipeline: a backchannel pauses the agent and lets it resume where it was, words that are not
 * one interrupt it, and a speculative reply the caller talks over is dropped (its tokens counted).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CallIO, PlayResult } from '../../src/voice/agent.js';
import { createFlowSession } from '../../src/voice/flow/index.js';
import { frame, type Frame } from '../../src/voice/frames.js';
import { ConversationMetrics } from '../../src/voice/metrics.js';
import { Pipeline, type FrameProcessor } from '../../src/voice/pipeline.js';
import { ConverseProcessor, VOICEMAIL_PATTERN } from '../../src/voice/processors/converse.js';
import { OutputProcessor } from '../../src/voice/processors/output.js';
import { SentenceProcessor, TtsProcessor } from '../../src/voice/processors/speak.js';
import { TurnTakingProcessor } from '../../src/voice/processors/turns.js';
import type { TTS } from '../../src/voice/services.js';
import { BackchannelFilter, expectationOf, RuleBasedEndOfTurn, resolveTurnTaking, waitFor, type BargeInRecord, type EndOfTurn, type TurnDecisionRecord, type TurnEvidence } from '../../src/voice/turns/index.js';
import { ScriptedLLM } from '../helpers/scripted-llm.js';

const tick = (ms = 0) => new Promise((r) => setTimeout(r, ms));
/** Waits until `ok()` holds (the pipeline runs on timers and promises); fails after 2 s. */
async function until(ok: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 200 && !ok(); i++) await tick(10);
  assert.ok(ok(), what);
}

describe('backchannel filter', () => {
  const filter = new BackchannelFilter('en-US', ['you bet']);
  it('takes listener words and runs of them as backchannels', () => {
    for (const text of ['Mm-hmm.', 'Yeah.', 'okay', 'Right, right.', 'Uh-huh', 'I see.', 'Got it.', 'Okay, okay.', 'You bet!']) assert.ok(filter.isBackchannel(text), text);
  });
  it('does not take words that claim the turn, long runs, or silence', () => {
    for (const text of ['No', 'No, wait', 'Stop', 'Okay but', 'Sorry', 'yeah yeah yeah', '', 'Wait, what?']) assert.ok(!filter.isBackchannel(text), text);
  });
  it('words still being recognised may yet become a backchannel ("I" of "I see"), or cannot ("No", "I need")', () => {
    for (const text of ['I', 'Got', 'Oh', 'Mm-hmm', 'Yeah, I', 'of']) assert.ok(filter.mayBecomeBackchannel(text), text);
    for (const text of ['No', 'I need', 'Got to', 'Stop', 'yeah yeah yeah', '']) assert.ok(!filter.mayBecomeBackchannel(text), text);
  });
  it('has a lexicon per language', () => {
    assert.ok(new BackchannelFilter('es').isBackchannel('Vale, claro.'));
    assert.ok(new BackchannelFilter('hi-IN').isBackchannel('haan ji'));
    assert.ok(!new BackchannelFilter('es').isBackchannel('No, espera'));
    // English, Spanish and Hindi at least (Hindi in Latin letters and in Devanagari).
    assert.ok(new BackchannelFilter('es-ES').isBackchannel('Ajá, sí.'));
    assert.ok(new BackchannelFilter('hi').isBackchannel('अच्छा, हाँ'));
    assert.ok(!new BackchannelFilter('hi').isBackchannel('nahin, ruko'));
    // A language without a lexicon of its own falls back to English's.
    assert.ok(new BackchannelFilter('ja').isBackchannel('okay'));
  });
});

describe('end of turn rules', () => {
  const eot = new RuleBasedEndOfTurn({ minWaitMs: 400, maxWaitMs: 1600 });
  const decide = (text: string, more: Partial<TurnEvidence> = {}) => eot.decide({ text, final: true, expectation: 'open', language: 'en', ...more });
  it('a trailing conjunction, preposition or article: not done, the longest wait', () => {
    for (const text of ["I'd like to.", 'Yes, and', 'It is the order with the', 'My number is']) assert.deepEqual([decide(text).reason, decide(text).waitMs], ['trailing_word', 1600], text);
    assert.equal(decide('I think').reason, 'trailing_word');
  });
  it('a filler at the end: not done', () => {
    assert.equal(decide('Um.').reason, 'filler');
    assert.equal(decide('Thursday, let me see.').reason, 'filler');
  });
  it('a question from the caller: done, the shortest wait', () => {
    assert.deepEqual([decide('Can you send it again?').reason, decide('Can you send it again?').waitMs], ['question', 400]);
  });
  it('a full sentence: done, the shortest wait', () => {
    const d = decide('Please call me tomorrow morning.');
    assert.deepEqual([d.reason, d.waitMs], ['complete', 400]);
    assert.ok(d.probability >= 0.5);
  });
  it('a bare answer: likely done after a yes/no question, with a longer wait for the "Yes. And ..." case', () => {
    const yes = decide('Yes.', { expectation: 'yes_no' });
    assert.equal(yes.reason, 'answer');
    assert.ok(yes.probability >= 0.5 && yes.waitMs > 400 && yes.waitMs < 1600);
    assert.equal(decide('Yes.').reason, 'short');
    assert.ok(decide('Yes.').probability < yes.probability);
  });
  it('digits while a number is asked for: more may come', () => {
    assert.equal(decide('five five five, one two', { expectation: 'digits' }).reason, 'digits');
    assert.equal(decide('five five five, one two').reason, 'complete');
  });
  it('prosody and an interim transcript move the probability', () => {
    const plain = decide('Thursday works for me.').probability;
    assert.ok(decide('Thursday works for me.', { prosody: { segmentMs: 900, pitch: 'falling' } }).probability > plain);
    assert.ok(decide('Thursday works for me.', { prosody: { segmentMs: 900, pitch: 'rising' } }).probability < plain);
    assert.ok(decide('Thursday works for me.', { final: false }).probability < plain);
  });
  it('no words: nothing to answer', () => {
    assert.deepEqual(decide('').reason, 'no_words');
  });
  it("what the agent's question expects", () => {
    assert.equal(expectationOf('Your order is ready. Shall I confirm it?'), 'yes_no');
    assert.equal(expectationOf('Is that right?'), 'yes_no');
    assert.equal(expectationOf('What is your phone number?'), 'digits');
    assert.equal(expectationOf('When would suit you?'), 'open');
    assert.equal(expectationOf(undefined), 'open');
  });
});

/** The transport side of a call: plays when told (resolve), clears on demand, keeps what it was given. */
function fakeIO() {
  const queue: Array<{ pcm: Int16Array; resolve: (r: PlayResult) => void }> = [];
  const given: Int16Array[] = [];
  let clears = 0;
  const io: CallIO = {
    sampleRateHz: 8000,
    signal: new AbortController().signal,
    play: (pcm) => {
      given.push(pcm);
      return new Promise((resolve) => queue.push({ pcm, resolve }));
    },
    clear: () => {
      clears++;
      for (const p of queue.splice(0)) p.resolve('cleared');
    },
    hangup: () => undefined,
    transfer: async () => undefined,
    onAudio: () => undefined,
    onDtmf: () => undefined,
  };
  return { io, queue, given, clears: () => clears };
}

const settings = (over: Parameters<typeof resolveTurnTaking>[0] = {}) =>
  resolveTurnTaking({ end_of_turn: { min_wait_ms: 40, max_wait_ms: 150 }, barge_in: { max_speech_ms: 5000 }, ...over }, undefined);

function harness(processors: FrameProcessor[]) {
  const down: Frame[] = [];
  const up: Frame[] = [];
  const pipeline = new Pipeline(processors, { sink: (f, d) => (d === 'down' ? down : up).push(f), onError: (err) => assert.fail(err as Error) });
  return { pipeline, down, up };
}

const said = (text: string, final = true) => frame({ kind: 'transcription' as const, text, final });
const started = () => frame({ kind: 'user_started_speaking' as const });
const stopped = () => frame({ kind: 'user_stopped_speaking' as const });
const audio = (n: number, text: string, last: boolean, turn = 1) => frame({ kind: 'output_audio' as const, pcm: new Int16Array(n).fill(1000), sampleRateHz: 8000, text, turn, last });

describe('barge-in: pause, resume, interrupt (frames in, frames out)', () => {
  it('pauses the agent on speech over it, resumes where it was after a backchannel, and stops it for words that are not one', async () => {
    const { io, given, clears, queue } = fakeIO();
    const bargeIns: BargeInRecord[] = [];
    const spoke: string[] = [];
    const turns = new TurnTakingProcessor({ settings: settings(), onBargeIn: (r) => bargeIns.push(r) });
    const output = new OutputProcessor(io, new ConversationMetrics(), { spoke: (_t, text) => spoke.push(text), ended: () => {}, transferred: () => {} });
    const { pipeline, down, up } = harness([turns, output]);
    // The agent says one sentence of 2 s (two 1 s pieces).
    pipeline.sendTo(output, audio(8000, 'A long sentence.', false));
    pipeline.sendTo(output, audio(8000, 'A long sentence.', true));
    await until(() => up.some((f) => f.kind === 'bot_started_speaking'), 'the agent speaks');
    const before = given.length;
    // "Mm-hmm" over it: paused at once (the transport cleared, the rest kept), then resumed.
    pipeline.send(started());
    await until(() => clears() === 1, 'paused at once: the transport was cleared');
    assert.equal(given.length, before, 'nothing more is played while paused');
    pipeline.send(said('Mm-hmm.'));
    pipeline.send(stopped());
    await until(() => given.length > before, 'resumed: the rest is played again');
    const resent = given.slice(before).reduce((n, p) => n + p.length, 0);
    assert.ok(resent > 0 && resent <= 16000, 'from where it was, not from the start of the reply');
    assert.ok(!down.some((f) => f.kind === 'interruption') && !up.some((f) => f.kind === 'interruption'));
    assert.deepEqual(bargeIns.map((b) => [b.kind, b.text]), [['ignored_backchannel', 'Mm-hmm.']]);
    // The rest is heard in full: the sentence counts as spoken.
    for (const p of queue.splice(0)) p.resolve('played');
    await until(() => spoke.includes('A long sentence.'), 'the sentence was heard');

    // A real interruption over the next reply: words that are not a backchannel stop it.
    pipeline.sendTo(output, audio(8000, 'Another one.', true, 2));
    await until(() => up.filter((f) => f.kind === 'bot_started_speaking').length === 2, 'the agent speaks again');
    pipeline.send(started());
    pipeline.send(said('No, wait', false));
    await until(() => up.some((f) => f.kind === 'interruption'), 'interrupted by the words');
    assert.equal(clears(), 3, 'paused at once, then cleared for good');
    assert.ok(up.some((f) => f.kind === 'agent_interrupted'));
    assert.deepEqual(bargeIns.map((b) => b.kind), ['ignored_backchannel', 'words']);
    // The words are the start of the caller's turn.
    pipeline.send(said('No, wait, that is wrong.'));
    pipeline.send(stopped());
    await until(() => down.some((f) => f.kind === 'user_turn'), 'the caller has the turn');
    assert.equal((down.find((f) => f.kind === 'user_turn') as { text: string }).text, 'No, wait, that is wrong.');
  });

  it('waits for the rest of words that may be a backchannel ("I" of "I see"), and a drawn-out backchannel outlasting max_speech_ms does not stop the agent', async () => {
    const { io, queue } = fakeIO();
    const bargeIns: BargeInRecord[] = [];
    const turns = new TurnTakingProcessor({ settings: settings({ barge_in: { max_speech_ms: 100 } }), onBargeIn: (r) => bargeIns.push(r) });
    const output = new OutputProcessor(io, new ConversationMetrics(), { spoke: () => {}, ended: () => {}, transferred: () => {} });
    const { pipeline, down, up } = harness([turns, output]);
    pipeline.sendTo(output, audio(8000, 'A long sentence.', false));
    pipeline.sendTo(output, audio(8000, 'A long sentence.', true));
    await until(() => up.some((f) => f.kind === 'bot_started_speaking'), 'the agent speaks');
    // "I ... see": the first word alone is not a backchannel, but may become one.
    pipeline.send(started());
    pipeline.send(said('I', false));
    // Longer than max_speech_ms (100 ms) while the words are still a backchannel's.
    await tick(250);
    pipeline.send(said('I see.'));
    pipeline.send(stopped());
    await until(() => bargeIns.length === 1, 'judged');
    assert.deepEqual(bargeIns.map((b) => [b.kind, b.text]), [['ignored_backchannel', 'I see.']]);
    assert.ok(!down.some((f) => f.kind === 'interruption') && !up.some((f) => f.kind === 'interruption'));
    // Words that cannot become one interrupt at once: "I need".
    pipeline.send(started());
    pipeline.send(said('I need', false));
    await until(() => up.some((f) => f.kind === 'interruption'), 'interrupted');
    assert.deepEqual(bargeIns.map((b) => b.kind), ['ignored_backchannel', 'words']);
    for (const p of queue.splice(0)) p.resolve('played');
    pipeline.send(frame({ kind: 'end' as const, reason: 'customer' as const }));
  });

  it('words that come late for a sound let pass as a noise still stop the agent', async () => {
    const { io, queue } = fakeIO();
    const bargeIns: BargeInRecord[] = [];
    const turns = new TurnTakingProcessor({ settings: settings(), onBargeIn: (r) => bargeIns.push(r) });
    const output = new OutputProcessor(io, new ConversationMetrics(), { spoke: () => {}, ended: () => {}, transferred: () => {} });
    const { pipeline, up } = harness([turns, output]);
    pipeline.sendTo(output, audio(8000, 'A long sentence.', false));
    pipeline.sendTo(output, audio(8000, 'A long sentence.', true));
    await until(() => up.some((f) => f.kind === 'bot_started_speaking'), 'the agent speaks');
    pipeline.send(started());
    pipeline.send(stopped());
    await until(() => bargeIns.length === 1, 'no words came in time: a noise, let pass');
    pipeline.send(said('Stop.'));
    await until(() => up.some((f) => f.kind === 'interruption'), 'the late words interrupt');
    assert.deepEqual(bargeIns.map((b) => [b.kind, b.text]), [['ignored_noise', ''], ['words', 'Stop.']]);
    for (const p of queue.splice(0)) p.resolve('played');
    pipeline.send(frame({ kind: 'end' as const, reason: 'customer' as const }));
  });

  it('ducks instead when the node says so, and a noise without words lets it go on', async () => {
    const { io, given } = fakeIO();
    const bargeIns: BargeInRecord[] = [];
    const turns = new TurnTakingProcessor({ settings: settings({ barge_in: { on_speech: 'duck', duck_level: 0.5, max_speech_ms: 5000 } }), onBargeIn: (r) => bargeIns.push(r) });
    const output = new OutputProcessor(io, new ConversationMetrics(), { spoke: () => {}, ended: () => {}, transferred: () => {} });
    const { pipeline } = harness([turns, output]);
    pipeline.sendTo(output, audio(8000, 'A sentence.', true));
    await until(() => given.length === 1, 'played');
    pipeline.send(started());
    await until(() => given.length === 2, 'ducked: what was left is played again, quieter');
    assert.equal(given[1]![0], 500);
    pipeline.send(stopped());
    await until(() => given.length === 3, 'back to full level');
    assert.equal(given[2]![0], 1000);
    assert.deepEqual(bargeIns.map((b) => b.kind), ['ignored_noise']);
  });

  it('vad mode: any speech over the agent interrupts it', async () => {
    const { io } = fakeIO();
    const bargeIns: BargeInRecord[] = [];
    const turns = new TurnTakingProcessor({ settings: resolveTurnTaking({ mode: 'vad' }, undefined), onBargeIn: (r) => bargeIns.push(r) });
    const output = new OutputProcessor(io, new ConversationMetrics(), { spoke: () => {}, ended: () => {}, transferred: () => {} });
    const { pipeline, up } = harness([turns, output]);
    pipeline.sendTo(output, audio(8000, 'A sentence.', true));
    await until(() => up.some((f) => f.kind === 'bot_started_speaking'), 'speaks');
    pipeline.send(started());
    await until(() => up.some((f) => f.kind === 'interruption'), 'interrupted');
    assert.deepEqual(bargeIns.map((b) => b.kind), ['speech']);
  });
});

/** A TTS that answers every text with 100 ms of audio. */
const tts: TTS = {
  label: 'fake',
  sampleRateHz: 8000,
  async *synthesize() {
    await tick(1);
    yield new Int16Array(800).fill(2000);
  },
};

describe('a learned end-of-turn model in place of the rules', () => {
  it('gets the audio and the conversation it asks for, and its probability decides the wait', async () => {
    const seen: TurnEvidence[] = [];
    // A model's shape: audio and context in, a probability out, mapped to a wait.
    const model: EndOfTurn = {
      label: 'model',
      wants: { audioMs: 8000, context: true },
      decide: (e) => {
        seen.push(e);
        return { probability: 0.2, waitMs: waitFor(0.2, { minWaitMs: 40, maxWaitMs: 150 }), reason: 'model' };
      },
    };
    const decisions: TurnDecisionRecord[] = [];
    const conversation = [{ role: 'assistant' as const, content: 'When would suit you?' }];
    const turns = new TurnTakingProcessor({ settings: settings(), endOfTurn: model, conversation: () => conversation, onTurn: (r) => decisions.push(r) });
    const { pipeline, down } = harness([turns]);
    const pcm = new Int16Array(8000).fill(500);
    pipeline.send(started());
    pipeline.send(said('Thursday, I think.'));
    pipeline.send(frame({ kind: 'user_stopped_speaking' as const, audio: { pcm, sampleRateHz: 8000 } }));
    await until(() => down.some((f) => f.kind === 'user_turn'), 'the turn ends after the wait the model gave');
    assert.equal(seen[0]!.audio?.pcm, pcm);
    assert.deepEqual(seen[0]!.context, conversation);
    assert.equal(seen[0]!.text, 'Thursday, I think.');
    // Unlikely over (below the speculation threshold): no speculative reply, the silence decided.
    assert.ok(!down.some((f) => f.kind === 'user_turn' && f.speculative));
    assert.deepEqual(decisions.map((d) => [d.end_reason, d.eot_reason, d.wait_ms]), [['silence', 'model', 128]]);
  });
});

describe('speculative replies (frames in, frames out)', () => {
  const flowDef = { initial_node: 'a', nodes: [{ node_name: 'a', task_messages: [{ role: 'system' as const, content: 'Confirm the order.' }], respond_immediately: false }] };

  function conversation(replies: Array<{ text: string[] }>, gaveUp: string[] = []) {
    const llm = new ScriptedLLM(replies);
    const flow = createFlowSession(flowDef, { llm, variables: {} });
    const metrics = new ConversationMetrics();
    const { io, given } = fakeIO();
    const decisions: TurnDecisionRecord[] = [];
    const turns = new TurnTakingProcessor({ settings: settings(), onTurn: (r) => decisions.push(r), agentSaid: () => 'Shall I confirm it?' });
    const processors = [
      turns,
      new ConverseProcessor(flow, metrics, { idleMs: 60_000, maxIdlePrompts: 0, voicemail: VOICEMAIL_PATTERN, onGiveUp: (r) => gaveUp.push(r) }),
      new SentenceProcessor(true),
      new TtsProcessor(tts, 8000, metrics, (err) => assert.fail(err as Error)),
      new OutputProcessor(io, metrics, { spoke: () => {}, ended: () => {}, transferred: () => {} }),
    ];
    return { llm, flow, given, decisions, ...harness(processors) };
  }

  it('starts the reply on a likely end, holds it, and drops it when the caller goes on; the longer turn is answered', async () => {
    const c = conversation([{ text: ['Great, ', 'I will confirm it.'] }, { text: ['Noted, ', 'I will change the address.'] }]);
    c.pipeline.send(frame({ kind: 'start' as const }));
    c.pipeline.send(started());
    c.pipeline.send(said('Yes.'));
    c.pipeline.send(stopped());
    await until(() => c.llm.requests.length === 1, 'the reply started speculatively');
    await tick(5);
    assert.equal(c.given.length, 0, 'held: nothing played before the turn is confirmed');
    // The caller goes on before the silence confirmed the end.
    c.pipeline.send(started());
    await until(() => c.decisions.some((d) => d.end_reason === 'speculative_cancel'), 'cancelled');
    c.pipeline.send(said('And change the address too.'));
    c.pipeline.send(stopped());
    await until(() => c.given.length > 0, 'the reply to the whole turn is played');
    await until(() => c.decisions.some((d) => d.end_reason === 'speculative_hit'), 'confirmed');
    assert.equal(c.llm.requests.length, 2);
    // The second request saw the caller's whole turn, and not the dropped reply.
    assert.deepEqual(c.llm.requests[1]!.messages.filter((m) => m.role !== 'system'), [{ role: 'user', content: 'Yes. And change the address too.' }]);
    assert.deepEqual(
      c.flow.record.transcription.map((t) => t.content),
      ['Yes. And change the address too.', 'Noted, I will change the address.'],
    );
    // The dropped reply's tokens are counted, and counted as cancelled (the scripted LLM finished it: its own usage).
    assert.ok(c.flow.record.usage.promptTokens >= 20);
    assert.equal(c.flow.record.usage.cancelled.requests, 1);
    assert.ok(c.flow.record.usage.cancelled.promptTokens > 0 && c.flow.record.usage.cancelled.promptTokens < c.flow.record.usage.promptTokens);
    c.pipeline.send(frame({ kind: 'end' as const, reason: 'customer' as const }));
  });

  it("a machine's greeting is still heard as one after a speculative reply to its first words was dropped", async () => {
    const gaveUp: string[] = [];
    const c = conversation([{ text: ['Hello John, ', 'this is Dialer.'] }], gaveUp);
    c.pipeline.send(frame({ kind: 'start' as const }));
    c.pipeline.send(started());
    c.pipeline.send(said('Hi, this is John.'));
    c.pipeline.send(stopped());
    await until(() => c.llm.requests.length === 1, 'the reply started speculatively');
    c.pipeline.send(started());
    await until(() => c.decisions.some((d) => d.end_reason === 'speculative_cancel'), 'cancelled');
    assert.deepEqual(gaveUp, []);
    c.pipeline.send(said('Please leave a message after the tone.'));
    c.pipeline.send(stopped());
    await until(() => gaveUp.length > 0, 'the whole first turn is checked for a voicemail greeting');
    assert.deepEqual(gaveUp, ['voicemail']);
    assert.equal(c.given.length, 0, 'nothing was played to the machine');
    c.pipeline.send(frame({ kind: 'end' as const, reason: 'customer' as const }));
  });

  it('counts a cancelled reply cut off mid-stream in usage, estimated', async () => {
    const llm = new ScriptedLLM([]);
    let release!: () => void;
    const slow = new Promise<void>((r) => (release = r));
    const flow = createFlowSession(flowDef, {
      llm: {
        label: 'slow',
        model: 'slow',
        async *chat(request) {
          llm.requests.push({ messages: request.messages });
          yield { type: 'text', text: 'Great, ' };
          await Promise.race([slow, new Promise((r) => request.signal.addEventListener('abort', r))]);
          if (request.signal.aborted) return;
          yield { type: 'done', finishReason: 'stop', usage: { promptTokens: 10, completionTokens: 2 } };
        },
      },
      variables: {},
    });
    const controller = new AbortController();
    let confirm!: (v: boolean) => void;
    const confirmed = new Promise<boolean>((r) => (confirm = r));
    const out: string[] = [];
    const run = (async () => {
      for await (const a of flow.userTurn('Yes.', controller.signal, { confirmed })) if (a.type === 'say') out.push(a.text);
    })();
    await until(() => out.length === 1, 'streams');
    controller.abort();
    confirm(false);
    await run;
    flow.retract();
    release();
    assert.deepEqual(flow.record.transcription, []);
    assert.equal(flow.record.usage.cancelled.requests, 1);
    assert.ok(flow.record.usage.cancelled.promptTokens > 0);
    assert.equal(flow.record.usage.cancelled.completionTokens, 1);
    assert.equal(flow.record.usage.promptTokens, flow.record.usage.cancelled.promptTokens, 'in the totals too: cost stays honest');
  });
});
