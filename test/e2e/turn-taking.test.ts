/**
 * Turn-taking end to end: `dialer serve` calls the emulator's callee over Twilio's protocols, with a
 * streaming speech-to-text (Deepgram's protocol, interim words as they are spoken) and local
 * OpenAI-compatible LLM and TTS servers. Over the agent's greeting the callee says "Mm-hmm": the
 * agent pauses and goes on, and its greeting is heard in full; the callee answers; over the reply
 * the callee says "No, wait, that's wrong.": the agent stops and answers that instead.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { API_PREFIX } from '../../src/app.js';
import type { RunningServer } from '../../src/server.js';
import { startEmulator, type Emulator } from '../../src/emulator/index.js';
import type { Client } from '../helpers/app.js';
import { ClipBook, speechClip, type Clip } from '../helpers/clips.js';
import { startDeepgramServer, type DeepgramServer } from '../helpers/deepgram-server.js';
import { freePort } from '../helpers/net.js';
import { startOpenAIServer, type OpenAIServer } from '../helpers/openai-server.js';
import { serveDialer } from '../helpers/serve.js';

const TWILIO = { accountSid: 'AC00000000000000000000000000000021', authToken: 'turns-e2e-token' };
const KEY = 'turns-e2e-deepgram';
const GREETING = 'Hello Ana, this is Maya from Acme Deliveries. Your blue chair is due on Thursday between ten and two. Does that still suit you?';
const REPLY = 'Thank you, I will note that. The driver will call you half an hour before arriving, and you will get a text message too.';
const ANSWER = 'I am sorry, let me correct that. What should it be?';

let server: RunningServer;
let emulator: Emulator;
let ai: OpenAIServer;
let stt: DeepgramServer;
let admin: Client;
let dataDir: string;
let clips: Record<'backchannel' | 'answer' | 'interruption', Clip>;

before(async () => {
  clips = {
    backchannel: await speechClip('backchannel', 'Mm-hmm.'),
    answer: await speechClip('answer', 'Yes, that works.'),
    interruption: await speechClip('interruption', "No, wait, that's wrong."),
  };
  const book = new ClipBook(Object.values(clips));
  const port = await freePort();
  ai = await startOpenAIServer();
  stt = await startDeepgramServer(KEY, { transcriber: (send) => book.transcriber(send, 150) });
  emulator = await startEmulator({ dialerUrl: `http://127.0.0.1:${port}${API_PREFIX}`, twilio: TWILIO, plivo: { authId: 'MAX', authToken: 'x' }, exotel: { accountSid: 'x', apiKey: 'x', apiToken: 'x' } });
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'dialer-turns-'));
  ({ server, admin } = await serveDialer({
    PORT: String(port),
    HOST: '127.0.0.1',
    DIALER_DATA_DIR: dataDir,
    DIALER_JWT_SECRET: 'turns-secret-turns-secret-turns-secret-01',
    DIALER_ADMIN_EMAIL: 'admin@example.com',
    DIALER_ADMIN_PASSWORD: 'admin-password-1',
    DIALER_POLL_MS: '100',
    LOG_LEVEL: 'silent',
    TWILIO_ACCOUNT_SID: TWILIO.accountSid,
    TWILIO_AUTH_TOKEN: TWILIO.authToken,
    TWILIO_API_URL: emulator.url,
    LLM_BASE_URL: ai.url,
    TTS_PROVIDER: 'openai',
    TTS_BASE_URL: ai.url,
    STT_PROVIDER: 'deepgram',
    DEEPGRAM_API_KEY: KEY,
    DEEPGRAM_URL: stt.url,
  }));
});

after(async () => {
  await server?.close();
  await emulator?.close();
  await ai?.close();
  await stt?.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

describe('turn-taking on a call', () => {
  it('goes on over a backchannel, stops for a real interruption, and records each decision', async () => {
    const reseller = (await admin.post('/resellers', { name: 'Turns' })).body.id;
    // Speech over the agent is judged by its words here, however late a busy machine delivers them.
    const flow = {
      initial_node: 'talk',
      turn_taking: { barge_in: { max_speech_ms: 10_000 } },
      nodes: [{ node_name: 'talk', task_messages: [{ role: 'system', content: 'Confirm the delivery.' }] }],
    };
    const tpl = await admin.post('/templates', { name: 'turns', reseller_id: reseller, flow });
    assert.equal(tpl.status, 200, JSON.stringify(tpl.body));
    await admin.post('/configurations', { reseller_id: reseller, template: tpl.body.id, calling_provider: 'PROVIDER_A', call_start_time: '00:00', call_end_time: '00:00' });
    await admin.post('/numbers', { phone_number: '+12125550400', provider: 'PROVIDER_A' });
    // Replies by what the caller said (a reply started speculatively and dropped takes no script line).
    ai.respond = (body) => {
      const said = body.messages.filter((m) => m.role === 'user').map((m) => String(m.content));
      return { text: said.length === 0 ? GREETING : /wrong/.test(said[said.length - 1]!) ? ANSWER : REPLY };
    };
    const callee = '+14155550400';
    emulator.script(callee, {
      answer: 'answer',
      steps: [
        { waitForSpeech: { speakingMs: 1200, timeoutMs: 20_000 } },
        { play: clips.backchannel.pcm, label: 'backchannel' },
        { waitForQuiet: { quietMs: 1500, timeoutMs: 30_000 } },
        { play: clips.answer.pcm, label: 'answer' },
        { waitForSpeech: { speakingMs: 1200, timeoutMs: 20_000 } },
        { play: clips.interruption.pcm, label: 'interruption' },
        { waitForAudio: 15_000 },
        { waitForQuiet: { quietMs: 1500, timeoutMs: 30_000 } },
        { hangup: true },
      ],
      maxSeconds: 90,
    });
    // The speech server makes each text's audio once: made ahead, no reply waits on it (the clauses
    // and sentences the agent's replies are spoken in).
    const pieces = [GREETING, REPLY, ANSWER].flatMap((t) => {
      const [, clause, rest] = /^([^,]+,)\s+(.*)$/.exec(t)!;
      return [clause!, ...rest!.split(/(?<=[.?!])\s+/)];
    });
    for (const input of pieces) {
      const res = await fetch(`${ai.url}/audio/speech`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'tts-1', input, voice: 'alloy', response_format: 'pcm' }) });
      await res.arrayBuffer();
    }
    const pushed = await admin.post('/leads', { request_id: 'turns-1', template: 'turns', reseller_id: reseller, payload: { customer_mobile_number: callee } });
    assert.equal(pushed.status, 201, JSON.stringify(pushed.body));
    let lead: any;
    for (const deadline = Date.now() + 120_000; ; ) {
      lead = (await admin.get(`/leads/${pushed.body.lead_call_tracker_id}`)).body;
      if (lead.status === 'FINISHED' || lead.status === 'RETRY') break;
      assert.ok(Date.now() < deadline, `lead still ${lead.status}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    const meta = lead.metaData;
    assert.equal(lead.status, 'FINISHED', JSON.stringify(meta));
    assert.deepEqual(meta.errors, []);
    // The backchannel was ignored, the interruption stopped the agent by its words.
    assert.deepEqual(
      meta.turn_taking.barge_ins.map((b: any) => [b.kind, b.text]),
      [
        ['ignored_backchannel', 'Mm-hmm.'],
        ['words', meta.turn_taking.barge_ins[1]?.text],
      ],
      JSON.stringify({ turn_taking: meta.turn_taking, transcription: meta.transcription, clears: emulator.calls.find((c) => c.to === callee)?.received.clears, voiced: emulator.calls.find((c) => c.to === callee)?.received.voiced, timeline: emulator.calls.find((c) => c.to === callee)?.sent.timeline }),
    );
    assert.match(meta.turn_taking.barge_ins[1].text, /^No/);
    // The greeting was heard in full, "Mm-hmm" was not a turn, the cut reply is kept only as heard.
    const lines = meta.transcription.map((t: any) => [t.role, t.content]);
    assert.deepEqual(lines[0], ['assistant', GREETING]);
    assert.deepEqual(lines[1], ['user', 'Yes, that works.']);
    assert.ok(!lines.some(([, c]: [string, string]) => /mm-hmm/i.test(c)), JSON.stringify(lines));
    const reply = lines.find(([r, c]: [string, string]) => r === 'assistant' && REPLY.startsWith(c));
    assert.ok(!reply || reply[1] !== REPLY, 'the reply was cut');
    assert.deepEqual(lines.slice(-2), [
      ['user', "No, wait, that's wrong."],
      ['assistant', ANSWER],
    ]);
    // Each turn's end is recorded; the replies were started speculatively and confirmed.
    assert.ok(meta.turn_taking.turns.length >= 2);
    assert.ok(meta.turn_taking.turns.every((t: any) => ['silence', 'transcript', 'speculative_hit', 'speculative_cancel'].includes(t.end_reason)));
    assert.ok(meta.turn_taking.turns.some((t: any) => t.end_reason === 'speculative_hit'));
    // The callee's line saw a pause (cleared, then the rest again) and a stop.
    const call = emulator.calls.find((c) => c.to === callee)!;
    assert.ok(call.received.clears.length >= 2, JSON.stringify(call.received.clears));
    // The connections were warmed while the call rang.
    assert.ok(ai.chatRequests.length >= 3);
  });
});
