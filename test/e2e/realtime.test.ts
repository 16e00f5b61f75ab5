/**
 * A template's flow carried by a realtime speech-to-speech model: `dialer serve` with
 * DIALER_REALTIME_URL set to a local server that speaks the OpenAI Realtime API's WebSocket
 * protocol (test/helpers/realtime-server.ts: its events are the fixtures), calling the emulator's
 * callee over Twilio's protocols with real audio both ways.
 * - A three-node flow (a function with a hook, transitions, a tts_say and end_conversation) takes
 *   the same path, sends the same hook request and ends with the same outcome as on the chat LLM
 *   (the flow engine against the local OpenAI-compatible server); the caller's barge-in over the
 *   greeting truncates the model's item at what was heard, and the transcript keeps just that; the
 *   post-call analysis is the chat LLM's.
 * - A call whose template speaks two languages: switch_language to one it does not declare is
 *   refused (the model told so, the record keeps it); to Spanish, the session is updated with the
 *   Spanish instruction and transcription language, but not the model's voice (the API refuses a
 *   new voice once the model has spoken); the flow's own goodbye is spoken in the voice the
 *   template chose for Spanish; the transcript marks each line's language.
 * - A warm transfer: the chat LLM writes the briefing from the transcript, the human hears it and
 *   says yes (heard by the chat pipeline's speech-to-text), and is bridged; the customer, on hold
 *   meanwhile, speaks, and the model hears none of it (no turn, no reply). A human who declines
 *   gives the call back to the model, which is told so (and what the customer heard) before it
 *   answers the customer's next turn.
 * - An `error` event answering a request, and a socket dropped mid-call: the call ends with the
 *   error recorded, after an apology, never a dead call.
 * - The client alone: a telephony call's mu-law bytes are appended as they came (mu-law's negative
 *   zero, which a decode and encode would change, arrives as sent); at 16 kHz it speaks pcm16 at
 *   24 kHz; a server that does not answer fails the connect fast.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Emulator } from '../../src/emulator/index.js';
import { decodeMulaw, encodeMulaw } from '../../src/lib/audio.js';
import { OpenAIRealtime } from '../../src/providers/index.js';
import type { RealtimeEvent } from '../../src/voice/services.js';
import { APOLOGY } from '../../src/voice/flow/engine.js';
import type { Client } from '../helpers/app.js';
import { startOpenAIServer, type OpenAIServer } from '../helpers/openai-server.js';
import { startRealtimeServer, type RealtimeServer } from '../helpers/realtime-server.js';
import { freePort } from '../helpers/net.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import { addTemplate, callAna, confirmReseller, DECLINED, flow, GREETING, LANGUAGE_SCRIPT, LANGUAGES, languageFlow, onChat, SCRIPT } from '../helpers/realtime-flow.js';
import { serveOnEmulator, type OnEmulator } from '../helpers/serve.js';


let line: OnEmulator;
let emulator: Emulator;
let ai: OpenAIServer;
let rt: RealtimeServer;
let hooks: Receiver;
let admin: Client;
let reseller: string;

before(async () => {
  ai = await startOpenAIServer();
  rt = await startRealtimeServer({ firstAudioMs: 150 });
  hooks = await startReceiver({ crm: 'updated' });
  line = await serveOnEmulator('realtime', {
    LLM_BASE_URL: ai.url,
    STT_BASE_URL: ai.url,
    TTS_BASE_URL: ai.url,
    DIALER_REALTIME_URL: rt.url,
    DIALER_REALTIME_MODEL: 'gpt-realtime',
    DIALER_REALTIME_LANGUAGE_VOICES: 'es-ES=coral',
  });
  ({ emulator, admin } = line);
  reseller = await confirmReseller(admin, 'Realtime', hooks.url, '+12125550440');
});

after(async () => {
  await line?.close();
  await rt?.close();
  await ai?.close();
  await hooks?.close();
});

/** Pushes a lead for `callee` and waits for the call's end. */
const call = (requestId: string, callee: string, template = 'confirm') => callAna(admin, reseller, requestId, callee, template);

describe('a flow on a realtime model', () => {
  it('runs the three-node flow as the chat LLM does; a barge-in truncates the greeting at what was heard', async () => {
    const health = await admin.get('/health');
    assert.equal(health.body.calls.agent, 'realtime', JSON.stringify(health.body.calls));
    const chat = await onChat(ai);

    rt.replies.push(SCRIPT.greeting, SCRIPT.confirm, SCRIPT.askDay, SCRIPT.setDay);
    rt.transcripts.push('Yes, please confirm it.', 'Tuesday.');
    // The post-call analysis is the chat LLM's.
    const analysis = { success: true, reason: 'Ana confirmed order A-42 for Tuesday.' };
    ai.chat.push({ tools: [{ name: 'record_analysis', arguments: analysis }] });
    const received = rt.received.length;
    const callee = '+14155550441';
    emulator.script(callee, {
      answer: 'answer',
      // The caller answers over the greeting, once a second and a half of it was heard.
      steps: [{ waitForSpeech: { speakingMs: 1500, timeoutMs: 15_000 } }, { say: 'Yes, please confirm it.' }, { waitForAudio: 15_000 }, { say: 'Tuesday.' }, { waitForAudio: 15_000 }],
      maxSeconds: 45,
    });
    const lead = await call('rt-flow', callee);
    const meta = lead.metaData;
    assert.equal(lead.status, 'FINISHED', JSON.stringify(meta));
    assert.equal(meta.agent, 'realtime');
    assert.deepEqual(meta.errors, []);

    // The same path, hook request and outcome as on the chat LLM.
    assert.deepEqual(meta.node_traversal, ['greet', 'delivery', 'goodbye']);
    assert.deepEqual(meta.node_traversal, chat.nodes);
    const hook = hooks.requests.map((r) => ({ method: r.method, path: r.path, body: r.body }));
    assert.deepEqual(hook, [{ method: 'POST', path: '/orders/A-42', body: { order: 'A-42', confirmed: 'true' } }]);
    assert.deepEqual(hook, chat.hook);
    assert.equal(lead.outcome, 'confirmed');
    assert.equal(lead.outcome, chat.outcome);
    assert.deepEqual(meta.function_calls.map((f: any) => [f.node, f.name, f.arguments, f.transition_to]), [
      ['greet', 'confirm_order', { confirmed: true }, 'delivery'],
      ['delivery', 'set_day', { day: 'Tuesday' }, 'goodbye'],
    ]);

    // What the session was told: each node's instructions and tools, in a session.update, the
    // function's result, and telephony's G.711 mu-law with the server's voice activity detection.
    const events = rt.received.slice(received).map((r) => r.event);
    const updates = events.filter((e) => e.type === 'session.update').map((e) => e.session);
    assert.equal(updates[0].input_audio_format, 'g711_ulaw');
    assert.equal(updates[0].output_audio_format, 'g711_ulaw');
    assert.deepEqual(updates[0].turn_detection, { type: 'server_vad' });
    const greet = updates.find((u) => u.instructions.includes('confirm order A-42'));
    assert.ok(greet && greet.instructions.startsWith('You call Ana for Acme. Be brief.'), JSON.stringify(updates));
    // (opt_out: the configuration offers the built-in in every node.)
    assert.deepEqual(greet.tools.map((t: any) => [t.type, t.name]), [['function', 'confirm_order'], ['function', 'opt_out']]);
    const delivery = updates.find((u) => u.instructions.includes('Ask which day suits Ana'));
    assert.deepEqual(delivery?.tools.map((t: any) => t.name), ['set_day', 'opt_out']);
    const output = events.find((e) => e.type === 'conversation.item.create' && e.item.type === 'function_call_output');
    assert.ok(output && JSON.parse(output.item.output).ok === true, JSON.stringify(output));
    assert.ok(events.indexOf(output) < events.indexOf(events.find((e) => e.type === 'session.update' && e.session === delivery)));

    // The barge-in: the greeting's item was cut where the caller stopped hearing it ...
    const truncate = events.find((e) => e.type === 'conversation.item.truncate');
    const greetingAudio = rt.responses.find((r) => r.audioMs > 0)!;
    assert.ok(truncate, 'a conversation.item.truncate was sent');
    assert.equal(truncate.content_index, 0);
    assert.ok(truncate.audio_end_ms >= 1000 && truncate.audio_end_ms < greetingAudio.audioMs - 1000, `${truncate.audio_end_ms} ms of ${greetingAudio.audioMs} ms`);
    assert.deepEqual(meta.realtime.truncations.map((t: any) => t.audio_end_ms), [truncate.audio_end_ms]);
    // ... and the transcript keeps what was heard of it.
    const lines = meta.transcription.map((t: any) => [t.role, t.content]);
    const heard = lines[0][1] as string;
    assert.equal(lines[0][0], 'assistant');
    assert.ok(heard.length > 10 && heard.length < GREETING.length - 20 && GREETING.startsWith(heard), `heard "${heard}"`);
    assert.deepEqual(lines.slice(1), [
      ['user', 'Yes, please confirm it.'],
      ['assistant', 'Great. Which day suits you for the delivery?'],
      ['user', 'Tuesday.'],
      ['assistant', 'Thank you Ana. Goodbye!'],
    ]);
    assert.deepEqual(meta.analysis, analysis);
    // Usage from each response.done, and a cost.
    assert.ok(meta.usage.promptTokens >= 360 && meta.usage.completionTokens > 0, JSON.stringify(meta.usage));
    assert.ok(lead.cost > 0);
    assert.ok(lead.trace_scores.turn_latency_p50_ms >= 0, JSON.stringify(lead.trace_scores));
    // The caller's frames and the model's, counted against the clock as on the chat pipeline.
    const { media_frames, media_frames_late, output_frames, output_frames_late } = lead.trace_scores;
    assert.ok(media_frames > 100 && output_frames > 50 && media_frames_late <= media_frames && output_frames_late <= output_frames, JSON.stringify(lead.trace_scores));
  });

  it("switches language mid-call on switch_language: instructions and transcription language follow, the model's voice stays, the flow's own lines take the language's; an undeclared one is refused", async () => {
    await addTemplate(admin, reseller, 'languages', languageFlow, { ...LANGUAGES, language_voices: { 'es-ES': 'openai:coral' } });
    const S = LANGUAGE_SCRIPT;
    rt.replies.push(S.greeting, S.french, S.refused, S.spanish, S.confirmed);
    rt.transcripts.push('En français ?', 'En español, por favor.');
    const received = rt.received.length;
    const callee = '+14155550444';
    emulator.script(callee, {
      answer: 'answer',
      steps: [{ waitForAudio: 15_000 }, { say: 'En français ?' }, { waitForAudio: 15_000 }, { say: 'En español, por favor.' }, { waitForAudio: 15_000 }],
      maxSeconds: 45,
    });
    const lead = await call('rt-languages', callee, 'languages');
    const meta = lead.metaData;
    assert.equal(lead.status, 'FINISHED', JSON.stringify(meta));
    // The refusal is the one error, as on the chat pipeline.
    assert.deepEqual(meta.errors, ["switch_language: fr-FR is not a language of this call (en-US, es-ES): go on in the call's language and say which languages you speak"]);
    assert.equal(lead.outcome, 'confirmed');
    // Each line in the language it was said in.
    assert.deepEqual(
      meta.transcription.map((t: any) => [t.role, t.content, t.language]),
      [
        ['assistant', S.greeting.text, 'en-US'],
        ['user', 'En français ?', 'en-US'],
        ['assistant', S.refused.text, 'en-US'],
        ['user', 'En español, por favor.', 'en-US'],
        ['assistant', S.confirmed.text, 'es-ES'],
        ['assistant', 'Gracias. Adiós.', 'es-ES'],
      ],
    );
    // The switches as on the chat pipeline: French refused, Spanish taken.
    assert.deepEqual(meta.language_switches.map((x: any) => [x.from, x.to, x.by, x.refused ?? null]), [
      ['en-US', 'fr-FR', 'function', "not one of the call's languages (en-US, es-ES)"],
      ['en-US', 'es-ES', 'function', null],
    ]);

    // The flow's own goodbye, after the switch, in the voice the template chose for Spanish.
    assert.deepEqual(ai.speechRequests.filter((r) => r.input === 'Gracias. Adiós.').map((r) => r.voice), ['coral']);

    const events = rt.received.slice(received).map((r) => r.event);
    const updates = events.filter((e) => e.type === 'session.update');
    // The session starts in English, in the default voice; the model is told it may switch.
    assert.equal(updates[0].session.voice, 'alloy');
    assert.equal(updates[0].session.input_audio_transcription.language, 'en');
    assert.match(updates[1].session.instructions, /Speak English \(en-US\): answer the caller in English only\. If the caller switches to Spanish, call switch_language first\./);
    // The refusal: the model is told the call's languages, in the function's output.
    const outputs = events.filter((e) => e.type === 'conversation.item.create' && e.item.type === 'function_call_output');
    assert.match(JSON.parse(outputs[0].item.output).error, /fr-FR is not a language of this call \(en-US, es-ES\)/);
    // The switch: its result, then the session in Spanish (instructions, transcription), then the reply asked for.
    const spanish = updates.find((u) => u.session.instructions.includes('Speak Spanish (es-ES)'));
    assert.ok(spanish, JSON.stringify(updates.map((u) => u.session.instructions)));
    assert.equal(spanish.session.input_audio_transcription.language, 'es');
    assert.equal(JSON.parse(outputs[1].item.output).language, 'es-ES');
    const at = events.indexOf(spanish);
    assert.ok(events.indexOf(outputs[1]) < at && events.slice(at).some((e) => e.type === 'response.create'), 'function output, session.update, response.create');
    // The voice cannot change once the model has spoken: no update after the greeting was asked for names one (the server would refuse it).
    const greeting = events.findIndex((e) => e.type === 'response.create');
    const later = updates.filter((u) => events.indexOf(u) > greeting);
    assert.ok(later.includes(spanish) && later.every((u) => !('voice' in u.session)), JSON.stringify(updates.map((u) => u.session.voice)));
  });

  it('a warm transfer briefs the human while the customer is on hold (the model hears nothing of them), then bridges them', async () => {
    const human = '+14155550446';
    const warmFlow = {
      initial_node: 'help',
      nodes: [
        {
          node_name: 'help',
          role_messages: [{ role: 'system', content: 'You help {customer_name} with order {order_id}.' }],
          task_messages: [{ role: 'system', content: 'Offer help; put them through to a person when they ask.' }],
          functions: [{ name: 'talk_to_human', description: 'Put the caller through to a person', transfer_to_number: human, warm_transfer: { hold_message: 'One moment.' } }],
        },
      ],
    };
    await addTemplate(admin, reseller, 'warm', warmFlow);
    rt.replies.push({ text: 'Hello Ana, how can I help you?' }, { tools: [{ name: 'talk_to_human', arguments: {} }] });
    rt.transcripts.push('A person, please.');
    // The briefing is the chat LLM's, and the human's words go to the chat pipeline's
    // speech-to-text: the model is not on the human's call, and would speak what it wrote.
    ai.chat.length = 0;
    ai.chat.push({ text: 'Ana wants to speak with a person about her order.' });
    ai.transcripts.push('Yes, put them through.');
    const chatRequests = ai.chatRequests.length;
    const responses = rt.responses.length;
    const connections = rt.connections;
    emulator.script(human, {
      answer: 'answer',
      steps: [{ waitForAudio: 30_000 }, { say: 'Yes, put them through.', label: 'decision' }, { wait: 300 }, { say: 'Bob here.', label: 'bob' }, { waitForAudio: 20_000 }, { hangup: true }],
      maxSeconds: 60,
    });
    const callee = '+14155550445';
    emulator.script(callee, {
      answer: 'answer',
      // The customer speaks while on hold: nobody should answer that.
      steps: [{ waitForAudio: 15_000 }, { say: 'A person, please.' }, { waitForAudio: 15_000 }, { wait: 300 }, { say: 'Hello? Are you still there?', label: 'on hold' }, { waitForAudio: 30_000 }, { say: 'Hi Bob.', label: 'ana' }, { wait: 1500 }],
      maxSeconds: 60,
    });
    const lead = await call('rt-warm', callee, 'warm');
    const meta = lead.metaData;
    assert.equal(lead.outcome, 'TRANSFERRED', JSON.stringify(meta));
    assert.equal(meta.call_ended_by, 'transfer');
    assert.equal(meta.transferred_to, human);
    assert.deepEqual(meta.errors, []);
    const [warm] = meta.warm_transfers;
    assert.deepEqual(
      { briefing: warm.briefing, source: warm.briefing_source, decision: warm.decision, via: warm.via, heard: warm.heard },
      { briefing: 'Ana wants to speak with a person about her order.', source: 'llm', decision: 'accepted', via: 'voice', heard: 'Yes, put them through.' },
    );
    // The chat LLM wrote it from the transcript; the model was asked nothing more.
    const [briefingRequest, ...more] = ai.chatRequests.slice(chatRequests);
    assert.equal(more.length, 0);
    assert.match(briefingRequest!.body.messages[1].content, /Agent: Hello Ana, how can I help you\?\nCustomer: A person, please\./);
    assert.deepEqual(warm.events.map((e: any) => e.event), ['dial', 'answered', 'briefed', 'accepted', 'bridged']);
    // The customer's words on hold reached nobody: no turn, no reply of the model.
    assert.deepEqual(
      meta.transcription.map((t: any) => [t.role, t.content]),
      [
        ['assistant', 'Hello Ana, how can I help you?'],
        ['user', 'A person, please.'],
        ['assistant', 'One moment.'],
      ],
    );
    assert.equal(rt.connections, connections + 1);
    assert.equal(rt.responses.length - responses, 2, JSON.stringify(rt.responses.slice(responses)));
    // The human heard the briefing before deciding, and the customer after the bridge; the customer heard the human.
    const leg = emulator.calls.find((c) => c.to === human)!;
    const decision = leg.sent.timeline.find((e) => e.label === 'decision')!;
    const briefed = leg.received.voiced.filter((v) => v.toMs <= decision.fromMs).reduce((ms, v) => ms + v.toMs - v.fromMs, 0);
    assert.ok(briefed > 2000, `the human heard ${briefed} ms of briefing before deciding`);
    assert.ok(leg.received.voiced.some((v) => v.fromMs > decision.toMs!), 'the human heard the customer after the bridge');
    const customer = emulator.calls.find((c) => c.to === callee)!;
    const bob = leg.sent.timeline.find((e) => e.label === 'bob')!;
    assert.ok(customer.received.voiced.some((v) => v.fromMs >= bob.fromMs + leg.streamStartedAt! - customer.streamStartedAt! - 100), 'the customer heard the human');
  });

  it('a human who declines hands the call back to the model: the customer is told, the model hears them again and knows the human declined', async () => {
    const human = '+14155550448';
    await addTemplate(admin, reseller, 'warm-declined', DECLINED.flow(human));
    rt.replies.push(...DECLINED.replies);
    rt.transcripts.push(...DECLINED.transcripts);
    const received = rt.received.length;
    const responses = rt.responses.length;
    emulator.script(human, DECLINED.human);
    const callee = '+14155550447';
    emulator.script(callee, DECLINED.customer);
    const lead = await call('rt-warm-declined', callee, 'warm-declined');
    const meta = lead.metaData;
    assert.notEqual(lead.outcome, 'TRANSFERRED', JSON.stringify(meta));
    assert.equal(meta.call_ended_by, 'customer');
    assert.deepEqual(meta.errors, []);
    const [warm] = meta.warm_transfers;
    assert.deepEqual({ briefing: warm.briefing, source: warm.briefing_source, decision: warm.decision, via: warm.via }, { briefing: 'Ana asks about order A-42.', source: 'template', decision: 'declined', via: 'key' });
    // The customer's "Hello?" on hold reached nobody: no turn, no reply.
    assert.deepEqual(meta.transcription.map((t: any) => [t.role, t.content]), DECLINED.transcription);
    assert.equal(rt.responses.length - responses, 3, JSON.stringify(rt.responses.slice(responses)));
    // The model was told the human declined (the function's output) and what the customer heard,
    // before it answered the customer's next turn by itself.
    const items = rt.received.slice(received).filter((r) => r.event.type === 'conversation.item.create');
    const output = items.find((r) => r.event.item.type === 'function_call_output');
    assert.equal(JSON.parse(output!.event.item.output).transfer, 'declined', JSON.stringify(items));
    const told = items.find((r) => r.event.item.role === 'assistant');
    assert.equal(told?.event.item.content[0].text, 'My colleague is busy, so I will help you myself.');
    const reply = rt.responses.at(-1)!;
    assert.ok(output!.at <= reply.createdAt && told!.at <= reply.createdAt, `told at ${output!.at} and ${told!.at}, the reply began at ${reply.createdAt}`);
  });

  it('ends the call with the error recorded when the model answers a request with an error, or its socket drops', async () => {
    // An error event instead of the greeting.
    rt.replies.push({ error: { code: 'server_error', message: 'The server had an error while processing your request.' } });
    emulator.script('+14155550442', { answer: 'answer', steps: [{ waitForAudio: 15_000 }], maxSeconds: 30 });
    const failed = await call('rt-error', '+14155550442');
    assert.equal(failed.metaData.call_ended_by, 'error', JSON.stringify(failed.metaData));
    assert.ok(failed.metaData.errors.some((e: string) => e.includes('realtime model error: The server had an error')), JSON.stringify(failed.metaData.errors));
    assert.deepEqual(failed.metaData.transcription.map((t: any) => t.content), [APOLOGY]);

    // The socket dropped when the caller's answer would be answered.
    rt.replies.push({ text: 'Hello Ana. Shall I confirm your order?' }, { drop: true });
    rt.transcripts.push('Yes.');
    emulator.script('+14155550443', { answer: 'answer', steps: [{ waitForAudio: 15_000 }, { say: 'Yes.' }, { waitForAudio: 15_000 }], maxSeconds: 30 });
    const dropped = await call('rt-drop', '+14155550443');
    const meta = dropped.metaData;
    assert.equal(meta.call_ended_by, 'error', JSON.stringify(meta));
    assert.ok(meta.errors.some((e: string) => e.startsWith('realtime model: the connection closed')), JSON.stringify(meta.errors));
    assert.deepEqual(meta.node_traversal, ['greet']);
    assert.equal(meta.transcription[0].content, 'Hello Ana. Shall I confirm your order?');
  });

  it("appends a telephony call's mu-law bytes as they came, and encodes the audio that came without them", async () => {
    const model = new OpenAIRealtime({ url: rt.url, model: 'gpt-realtime', voice: 'alloy', transcriptionModel: 'whisper-1', connectTimeoutMs: 5000 });
    rt.keepAppended = true;
    try {
      const session = await model.connect({ signal: new AbortController().signal, sampleRateHz: 8000, config: { instructions: 'Listen.', tools: [] } });
      const connection = rt.connections - 1;
      // 0x7f is mu-law's negative zero: decoded and encoded again it would come back as 0xff.
      const carried = Buffer.from(Array.from({ length: 160 * 5 }, (_, i) => (i % 7 === 0 ? 0x7f : 0x80 | (i & 0x7f))));
      for (let at = 0; at < carried.length; at += 160) {
        const bytes = carried.subarray(at, at + 160);
        session.appendAudio(decodeMulaw(bytes), bytes);
      }
      const decodedOnly = Int16Array.from({ length: 160 }, (_, i) => (i - 80) * 50);
      session.appendAudio(decodedOnly);
      await session.close();
      const want = carried.length + 160;
      for (let i = 0; i < 100 && Buffer.concat(rt.appended[connection] ?? []).length < want; i++) await new Promise((r) => setTimeout(r, 20));
      const got = Buffer.concat(rt.appended[connection] ?? []);
      assert.deepEqual(got, Buffer.concat([carried, encodeMulaw(decodedOnly)]));
      assert.equal(rt.received.filter((r) => r.connection === connection && r.event.type === 'session.update').at(-1)!.event.session.input_audio_format, 'g711_ulaw');
    } finally {
      rt.keepAppended = false;
    }
  });

  it('speaks pcm16 at 24 kHz where the call is not telephony (WebRTC at 16 kHz), and fails fast where nothing answers', async () => {
    const model = new OpenAIRealtime({ url: rt.url, model: 'gpt-realtime', voice: 'alloy', transcriptionModel: 'whisper-1', connectTimeoutMs: 5000 });
    rt.replies.push({ text: 'Hello there.' });
    rt.transcripts.push('Hi.');
    const session = await model.connect({ signal: new AbortController().signal, sampleRateHz: 16_000, config: { instructions: 'Greet.', tools: [] } });
    const events: RealtimeEvent[] = [];
    const done = new Promise<void>((resolve) => session.onEvent((e) => (events.push(e), e.type === 'response_done' && resolve())));
    // A second of sound, then quiet: the server's VAD hears a turn in the resampled audio and answers it.
    const tone = Int16Array.from({ length: 16_000 }, (_, i) => Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / 16_000)));
    for (let at = 0; at < tone.length; at += 320) session.appendAudio(tone.subarray(at, at + 320));
    for (let i = 0; i < 40; i++) session.appendAudio(new Int16Array(320));
    await done;
    await session.close();
    const update = rt.received.filter((r) => r.event.type === 'session.update').at(-1)!.event.session;
    assert.deepEqual([update.input_audio_format, update.output_audio_format, update.instructions], ['pcm16', 'pcm16', 'Greet.']);
    assert.deepEqual(events.filter((e) => e.type !== 'audio' && e.type !== 'transcript').map((e) => e.type), ['speech_started', 'speech_stopped', 'response_started', 'user_transcript', 'response_done', 'closed']);
    const audio = events.flatMap((e) => (e.type === 'audio' ? [e.pcm.length] : [])).reduce((a, b) => a + b, 0);
    const sent = rt.responses.at(-1)!;
    assert.ok(Math.abs(audio / 16 - sent.audioMs) <= 100, `${audio / 16} ms at 16 kHz of ${sent.audioMs} ms sent`);
    assert.equal(events.filter((e) => e.type === 'transcript').map((e) => (e as { text: string }).text).join(''), 'Hello there.');

    const closedPort = `ws://127.0.0.1:${await freePort()}/v1/realtime`;
    await assert.rejects(new OpenAIRealtime({ url: closedPort, model: 'gpt-realtime', voice: 'alloy', transcriptionModel: 'whisper-1', connectTimeoutMs: 5000 }).connect({ signal: new AbortController().signal, sampleRateHz: 8000, config: { instructions: '', tools: [] } }), (err: Error & { retryable?: boolean }) => err.name === 'ServiceError' && err.retryable === true);
  });
});
