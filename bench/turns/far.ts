/**
 * The far side of `npm run bench:turns`, in a process of its own: the provider emulator with the
 * corpus's callees, and local AI servers speaking the real wire protocols at fixed latencies:
 * - speech-to-text (Deepgram's live protocol): interim results as words end and the final result
 *   150 ms after the end of speech (bench/turns/recogniser.ts);
 * - LLM (OpenAI chat completions, streamed): first token 350 ms after the request, then a word
 *   every 30 ms;
 * - TTS (OpenAI speech, PCM): first audio 120 ms after the request, the rest at 4x real time;
 * - a realtime model (the OpenAI Realtime API's WebSocket protocol) and another (Gemini Live's): its
 *   voice activity detection ends a turn after REALTIME.silenceMs of quiet, and the reply's first
 *   audio comes REALTIME.firstAudioMs later (the same greeting and replies, spoken by the local voice);
 * - every new connection (HTTP or WebSocket) pays a handshake of HANDSHAKE_MS, as TCP and TLS to a
 *   distant service do; a kept-alive connection pays nothing.
 *
 * Driven by its parent over the IPC channel:
 *   <- { type: 'ready', emulatorUrl, aiUrl, sttUrl, realtimeUrl, geminiUrl, geminiKey, behaviours }
 *   -> { type: 'calls', calls: [{ callee, behaviours: [ids] }] }   callee scripts for a run
 *   -> { type: 'collect', callees }   <- { type: 'collected', calls: [...] } once those calls ended
 *   -> { type: 'close' }
 */
import { startEmulator, type CalleeStep } from '../../src/emulator/index.js';
import { startDeepgramServer } from '../../test/helpers/deepgram-server.js';
import { startOpenAIServer, type ChatLog } from '../../test/helpers/openai-server.js';
import { speech, startRealtimeServer } from '../../test/helpers/realtime-server.js';
import { startGeminiLiveServer } from '../../test/helpers/gemini-live-server.js';
import { buildCorpus, clipsOf, TURN_KINDS, type Behaviour } from './corpus.js';
import type { Heard } from './measure.js';
import { ClipBook } from '../../test/helpers/clips.js';
import { DEEPGRAM_KEY, HANDSHAKE_MS, REALTIME, SERVICE } from './setup.js';


export interface CollectedCall {
  callee: string;
  behaviours: string[];
  heard: Heard;
  /** When the media stream started (Date.now()). */
  streamStartedAt: number;
  /** The LLM requests of this call: when asked, first token, whether cancelled, pieces streamed. */
  llm: Array<Pick<ChatLog, 'at' | 'firstTokenAt' | 'cancelled' | 'chunks'>>;
}

export type FarRequest = { type: 'calls'; calls: Array<{ callee: string; behaviours: string[] }> } | { type: 'collect'; callees: string[] } | { type: 'close' };
export type FarReply =
  | { type: 'ready'; emulatorUrl: string; aiUrl: string; sttUrl: string; realtimeUrl: string; geminiUrl: string; geminiKey: string; behaviours: Array<Omit<Behaviour, 'parts'> & { clips: number }> }
  | { type: 'collected'; calls: CollectedCall[] };

export const GREETING =
  'Hello, this is Maya from Acme Deliveries, calling about your order of a blue chair. It is due on Thursday between ten and two. Does that time still work for you?';
const REPLIES = [
  'Thank you, I have noted that, and I will update your delivery right away. Is there anything else?',
  'Of course, I understand. Let me change that for you now, it only takes a moment. Anything else?',
  'Alright, that is done. You will get a text message with the new details shortly. What else can I do?',
  'I see, thank you for telling me. I have passed that on to the team, and they will follow it up today.',
];

const TWILIO = JSON.parse(process.env.BENCH_TWILIO ?? '{}') as { accountSid: string; authToken: string };

const corpus = await buildCorpus();
const byId = new Map(corpus.map((b) => [b.id, b]));
const book = new ClipBook(corpus.flatMap(clipsOf));

const ai = await startOpenAIServer({ firstTokenMs: SERVICE.firstTokenMs, wordIntervalMs: SERVICE.wordIntervalMs, speechFirstAudioMs: SERVICE.speechFirstAudioMs, speechSpeedup: 4, connectionSetupMs: HANDSHAKE_MS });
/** Which call a chat request belongs to: the system prompt names the callee. */
const callee = (body: { messages: Array<{ role: string; content: unknown }> }) => /\+\d{8,15}/.exec(String(body.messages.find((m) => m.role === 'system')?.content ?? ''))?.[0];
ai.respond = (body) => {
  const users = body.messages.filter((m) => m.role === 'user').length;
  if (users === 0) return { text: GREETING };
  return { text: REPLIES[(users - 1) % REPLIES.length]! };
};
const realtime = await startRealtimeServer({ firstAudioMs: REALTIME.firstAudioMs });
realtime.respond = (n) => ({ text: n === 0 ? GREETING : REPLIES[(n - 1) % REPLIES.length]! });
const gemini = await startGeminiLiveServer({ firstAudioMs: REALTIME.firstAudioMs });
gemini.respond = (n) => ({ text: n === 0 ? GREETING : REPLIES[(n - 1) % REPLIES.length]! });
await Promise.all([GREETING, ...REPLIES].flatMap((text) => [speech(text, 8000), speech(text, 24_000)]));
/**
 * A multilingual stream (the language-switch engine's) names a language for each clip's words:
 * half the clips (by their id) Spanish, so a call's turns switch its language back and forth.
 */
const clipLanguage = (clip: { id: string }) => ([...clip.id].reduce((h, c) => (h * 31 + c.charCodeAt(0)) | 0, 7) & 1 ? 'es' : 'en');
const stt = await startDeepgramServer(DEEPGRAM_KEY, {
  transcriber: (send, query) => book.transcriber(send, SERVICE.sttResultMs, 8000, query.language === 'multi' ? clipLanguage : undefined),
  connectionSetupMs: HANDSHAKE_MS,
});
const emulator = await startEmulator({ dialerUrl: 'http://127.0.0.1:1', twilio: TWILIO, plivo: { authId: 'MAX', authToken: 'x' }, exotel: { accountSid: 'x', apiKey: 'x', apiToken: 'x' } });

const QUIET_MS = 2000;
const quiet: CalleeStep = { waitForQuiet: { quietMs: QUIET_MS, timeoutMs: 30_000 } };

/** The callee's script: each behaviour after the agent is quiet (a turn) or while it speaks (a barge-in). */
function script(ids: string[]): CalleeStep[] {
  const steps: CalleeStep[] = [];
  const list = ids.map((id) => byId.get(id)!);
  const isTurn = (b: Behaviour | undefined) => b !== undefined && TURN_KINDS.includes(b.kind);
  if (isTurn(list[0])) steps.push({ waitForAudio: 20_000 }, quiet);
  list.forEach((b, i) => {
    let part = 0;
    if (!isTurn(b)) steps.push({ waitForSpeech: { speakingMs: b.afterAgentMs ?? 1500, timeoutMs: 20_000 } });
    for (const p of b.parts) {
      if ('clip' in p) steps.push({ play: p.clip.pcm, label: `${b.id}#${part++}` });
      else steps.push({ wait: p.pauseMs });
    }
    const next = list[i + 1];
    // A turn is answered: the next barge-in lands on that answer; anything else waits for it to end.
    if (isTurn(b) && next && !isTurn(next)) return;
    if (isTurn(b)) steps.push({ waitForAudio: 8000 });
    steps.push(quiet);
  });
  steps.push({ hangup: true });
  return steps;
}

process.on('message', (m: FarRequest) => {
  switch (m.type) {
    case 'calls':
      for (const c of m.calls) emulator.script(c.callee, { answer: 'answer', ringMs: 300, steps: script(c.behaviours), maxSeconds: 240 });
      break;
    case 'collect':
      void (async () => {
        const calls: CollectedCall[] = [];
        for (const number of m.callees) {
          const call = await emulator.nextCall((c) => c.to === number, 600_000);
          await call.ended;
          calls.push({
            callee: number,
            behaviours: [],
            heard: { timeline: call.sent.timeline, voiced: call.received.voiced },
            streamStartedAt: call.streamStartedAt ?? NaN,
            llm: ai.chatRequests.filter((r) => callee(r.body) === number).map((r) => ({ at: r.at, firstTokenAt: r.firstTokenAt, cancelled: r.cancelled, chunks: r.chunks })),
          });
        }
        process.send!({ type: 'collected', calls } satisfies FarReply);
      })();
      break;
    case 'close':
      void Promise.all([emulator.close(), ai.close(), stt.close(), realtime.close(), gemini.close()]).finally(() => process.exit(0));
      break;
  }
});
process.on('disconnect', () => process.exit(0));
process.send!({
  type: 'ready',
  emulatorUrl: emulator.url,
  aiUrl: ai.url,
  sttUrl: stt.url,
  realtimeUrl: realtime.url,
  geminiUrl: gemini.url,
  geminiKey: gemini.apiKey,
  behaviours: corpus.map(({ parts, ...b }) => ({ ...b, clips: parts.filter((p) => 'clip' in p).length })),
} satisfies FarReply);
