/**
 * A template's flow carried by Gemini Live: `dialer serve` with DIALER_REALTIME_PROVIDER=gemini and
 * DIALER_REALTIME_URL set to a local server that speaks the Live API's WebSocket protocol
 * (test/helpers/gemini-live-server.ts), calling the emulator's callee over Twilio's protocols with
 * real audio both ways. The three-node flow of realtime.test.ts takes the same path, sends the same
 * hook request and ends with the same outcome as on the chat LLM; its transition opens the next
 * node's session, told the conversation so far; the caller's barge-in over the greeting (Gemini's
 * `interrupted`) keeps in the transcript what they heard of it; both sides' words reach the record.
 * A call whose template speaks two languages switches to Spanish on switch_language: the next
 * session's setup has the Spanish instruction, language code and voice. A warm transfer the human
 * declines puts the customer on hold (Gemini hears nothing of them) and gives the call back to it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Emulator } from '../../src/emulator/index.js';
import type { Client } from '../helpers/app.js';
import { startGeminiLiveServer, type GeminiLiveServer } from '../helpers/gemini-live-server.js';
import { startOpenAIServer, type OpenAIServer } from '../helpers/openai-server.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import { addTemplate, callAna, confirmReseller, DECLINED, flow, GREETING, LANGUAGE_SCRIPT, LANGUAGES, languageFlow, onChat, SCRIPT } from '../helpers/realtime-flow.js';
import { serveOnEmulator, type OnEmulator } from '../helpers/serve.js';


let line: OnEmulator;
let emulator: Emulator;
let ai: OpenAIServer;
let live: GeminiLiveServer;
let hooks: Receiver;
let admin: Client;
let reseller: string;

before(async () => {
  ai = await startOpenAIServer();
  live = await startGeminiLiveServer({ firstAudioMs: 150 });
  hooks = await startReceiver({ crm: 'updated' });
  line = await serveOnEmulator('gemini', {
    LLM_BASE_URL: ai.url,
    STT_BASE_URL: ai.url,
    DIALER_REALTIME_PROVIDER: 'gemini',
    DIALER_REALTIME_URL: live.url,
    DIALER_REALTIME_API_KEY: live.apiKey,
    DIALER_REALTIME_LANGUAGE_VOICES: 'es-ES=Kore',
  });
  ({ emulator, admin } = line);
  reseller = await confirmReseller(admin, 'Gemini', hooks.url, '+12125550450');
});

after(async () => {
  await line?.close();
  await live?.close();
  await ai?.close();
  await hooks?.close();
});

describe('a flow on Gemini Live', () => {
  it('runs the three-node flow as the chat LLM does, a session per node; a barge-in keeps what was heard', async () => {
    const chat = await onChat(ai);
    live.replies.push(SCRIPT.greeting, SCRIPT.confirm, SCRIPT.askDay, SCRIPT.setDay);
    live.transcripts.push('Yes, please confirm it.', 'Tuesday.');
    const analysis = { success: true, reason: 'Ana confirmed order A-42 for Tuesday.' };
    ai.chat.push({ tools: [{ name: 'record_analysis', arguments: analysis }] });
    const callee = '+14155550451';
    emulator.script(callee, {
      answer: 'answer',
      steps: [{ waitForSpeech: { speakingMs: 1500, timeoutMs: 15_000 } }, { say: 'Yes, please confirm it.' }, { waitForAudio: 15_000 }, { say: 'Tuesday.' }, { waitForAudio: 15_000 }],
      maxSeconds: 45,
    });
    const lead = await callAna(admin, reseller, 'gemini-flow', callee, 'confirm');
    const meta = lead.metaData;
    assert.equal(lead.status, 'FINISHED', JSON.stringify(meta));
    assert.deepEqual([meta.agent, meta.realtime.model], ['realtime', 'gemini-3.8-live']);
    assert.deepEqual(meta.errors, []);

    // The same path, hook request and outcome as on the chat LLM.
    assert.deepEqual(meta.node_traversal, chat.nodes);
    assert.deepEqual(
      hooks.requests.map((r) => ({ method: r.method, path: r.path, body: r.body })),
      chat.hook,
    );
    assert.equal(lead.outcome, 'confirmed');
    assert.equal(lead.outcome, chat.outcome);

    // Each node its own session: its instructions and tools in the setup, the conversation so far as clientContent turns.
    const setups = live.received.filter((r) => r.message.setup).map((r) => ({ connection: r.connection, setup: r.message.setup }));
    const delivery = setups.find((s) => s.setup.systemInstruction?.parts[0].text.includes('Ask which day suits Ana'))!;
    assert.ok(delivery, JSON.stringify(setups.map((s) => s.setup.systemInstruction)));
    assert.deepEqual(delivery.setup.tools[0].functionDeclarations.map((f: any) => f.name), ['set_day', 'opt_out']);
    const told = live.received.find((r) => r.connection === delivery.connection && r.message.clientContent?.turns)!.message.clientContent;
    assert.equal(told.turnComplete, false);
    assert.deepEqual(told.turns.slice(1).map((t: any) => t.role), ['user']);
    assert.match(told.turns[1].parts.map((p: any) => p.text).join(' '), /^Yes, please confirm it\. \(You called confirm_order with \{"confirmed":true\}; it returned \{.*"ok":true/);

    // The barge-in: the transcript keeps what the caller heard of the greeting, and so did the next session.
    const lines = meta.transcription.map((t: any) => [t.role, t.content]);
    const heard = lines[0][1] as string;
    assert.ok(lines[0][0] === 'assistant' && heard.length > 10 && heard.length < GREETING.length - 20 && GREETING.startsWith(heard), `heard "${heard}"`);
    assert.deepEqual(told.turns[0], { role: 'model', parts: [{ text: heard }] });
    assert.deepEqual(meta.realtime.truncations.length, 1);
    assert.deepEqual(lines.slice(1), [
      ['user', 'Yes, please confirm it.'],
      ['assistant', 'Great. Which day suits you for the delivery?'],
      ['user', 'Tuesday.'],
      ['assistant', 'Thank you Ana. Goodbye!'],
    ]);
    assert.deepEqual(meta.analysis, analysis);
    assert.ok(meta.usage.promptTokens >= 120 && meta.usage.completionTokens > 0, JSON.stringify(meta.usage));
    assert.ok(lead.cost > 0);
  });

  it('switches to Spanish on switch_language: the next session speaks Spanish in the language\'s voice', async () => {
    await addTemplate(admin, reseller, 'languages', languageFlow, LANGUAGES);
    const S = LANGUAGE_SCRIPT;
    live.replies.push(S.greeting, S.spanish, S.confirmed);
    live.transcripts.push('En español, por favor.');
    const received = live.received.length;
    const callee = '+14155550452';
    emulator.script(callee, { answer: 'answer', steps: [{ waitForAudio: 15_000 }, { say: 'En español, por favor.' }, { waitForAudio: 15_000 }], maxSeconds: 45 });
    const lead = await callAna(admin, reseller, 'gemini-languages', callee, 'languages');
    const meta = lead.metaData;
    assert.equal(lead.status, 'FINISHED', JSON.stringify(meta));
    assert.deepEqual(meta.errors, []);
    assert.equal(lead.outcome, 'confirmed');
    assert.deepEqual(
      meta.transcription.map((t: any) => [t.role, t.content, t.language]),
      [
        ['assistant', S.greeting.text, 'en-US'],
        ['user', 'En español, por favor.', 'en-US'],
        ['assistant', S.confirmed.text, 'es-ES'],
        ['assistant', 'Gracias. Adiós.', 'es-ES'],
      ],
    );
    assert.deepEqual(meta.language_switches.map((x: any) => [x.from, x.to, x.by]), [['en-US', 'es-ES', 'function']]);
    // The sessions' setups: English in the default voice, then (after the switch) Spanish in its own.
    const setups = live.received.slice(received).filter((r) => r.message.setup).map((r) => r.message.setup);
    const speech = (setup: any) => [setup.generationConfig.speechConfig.languageCode, setup.generationConfig.speechConfig.voiceConfig.prebuiltVoiceConfig.voiceName];
    assert.deepEqual(speech(setups[0]), ['en-US', 'Puck']);
    const spanish = setups.find((s) => s.systemInstruction?.parts[0].text.includes('Speak Spanish (es-ES): answer the caller in Spanish only.'));
    assert.ok(spanish, JSON.stringify(setups.map((s) => s.systemInstruction)));
    assert.deepEqual(speech(spanish), ['es-ES', 'Kore']);
    assert.ok(setups.slice(0, setups.indexOf(spanish)).every((s) => speech(s)[0] === 'en-US'), JSON.stringify(setups.map(speech)));
  });

  it('a warm transfer the human declines: the customer is on hold meanwhile, then the model takes the call again', async () => {
    const human = '+14155550454';
    await addTemplate(admin, reseller, 'warm-declined', DECLINED.flow(human));
    live.replies.push(...DECLINED.replies);
    live.transcripts.push(...DECLINED.transcripts);
    const replies = live.responses.length;
    emulator.script(human, DECLINED.human);
    const callee = '+14155550453';
    emulator.script(callee, DECLINED.customer);
    const lead = await callAna(admin, reseller, 'gemini-warm-declined', callee, 'warm-declined');
    const meta = lead.metaData;
    assert.equal(meta.call_ended_by, 'customer', JSON.stringify(meta));
    assert.deepEqual(meta.errors, []);
    const [warm] = meta.warm_transfers;
    assert.deepEqual({ briefing: warm.briefing, decision: warm.decision, via: warm.via }, { briefing: 'Ana asks about order A-42.', decision: 'declined', via: 'key' });
    assert.deepEqual(meta.transcription.map((t: any) => [t.role, t.content]), DECLINED.transcription);
    // Three replies: the greeting, the function call, the answer after the decline (none to "Hello?" on hold).
    assert.equal(live.responses.length - replies, 3, JSON.stringify(live.responses.slice(replies)));
  });
});
