/**
 * The far side of `npm run bench:voice`, in a process of its own so it does not share Dialer's
 * event loop or CPU: the provider emulator (the callees, their media streams and callbacks) and the
 * local OpenAI-compatible LLM, transcription and speech servers that answer at once.
 *
 * Driven by its parent over the IPC channel:
 *   -> { type: 'script', callee, script }   a callee for the next round
 *   -> { type: 'measure' }                  starts measuring this process's event-loop lag and CPU
 *   -> { type: 'stats' }                    <- { type: 'measured', lagP99Ms, cpuS, peakLiveCalls,
 *                                              framesSent, framesSentLate } since 'measure'
 *   -> { type: 'close' }                    closes the servers and exits
 *   <- { type: 'ready', emulatorUrl, aiUrl } once listening
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { startEmulator, type CalleeScript } from '../src/emulator/index.js';
import { startOpenAIServer } from '../test/helpers/openai-server.js';
import { startRealtimeServer } from '../test/helpers/realtime-server.js';

export type FarRequest = { type: 'script'; callee: string; script: CalleeScript } | { type: 'measure' } | { type: 'stats' } | { type: 'close' };
export type FarReply = { type: 'ready'; emulatorUrl: string; aiUrl: string; realtimeUrl: string } | { type: 'measured'; lagP99Ms: number; cpuS: number; peakLiveCalls: number; framesSent: number; framesSentLate: number };

const TWILIO = JSON.parse(process.env.BENCH_TWILIO ?? '{}') as { accountSid: string; authToken: string };

const ai = await startOpenAIServer();
ai.respond = (body) => {
  const last = body.messages[body.messages.length - 1];
  return last?.role === 'user' ? { tools: [{ name: 'confirm_order', arguments: { confirmed: true } }] } : { text: 'Hello! Shall I confirm your order?' };
};
ai.transcribe = () => 'Yes, please confirm it.';
// The same conversation on a realtime model (AGENT=realtime), answering at once: the greeting, then
// a short word with the function call, then nothing (the flow says goodbye itself).
const realtime = await startRealtimeServer({ firstAudioMs: 0 });
realtime.respond = (n) => (n === 0 ? { text: 'Hello! Shall I confirm your order?' } : n === 1 ? { text: 'Certainly.', tools: [{ name: 'confirm_order', arguments: { confirmed: true } }] } : {});
const emulator = await startEmulator({ dialerUrl: 'http://127.0.0.1:1', twilio: TWILIO, plivo: { authId: 'MAX', authToken: 'x' }, exotel: { accountSid: 'x', apiKey: 'x', apiToken: 'x' }, recordMedia: false });

let lag = monitorEventLoopDelay({ resolution: 10 });
let cpuFrom = process.cpuUsage();
// Calls answered and not yet over, sampled: the most at once is what "simultaneous" means.
let peakLiveCalls = 0;
let sampler: NodeJS.Timeout | undefined;
/** The round's calls are those from here on. */
let firstCall = 0;
const send = (reply: FarReply) => process.send!(reply);

process.on('message', (m: FarRequest) => {
  switch (m.type) {
    case 'script':
      emulator.script(m.callee, m.script);
      break;
    case 'measure':
      lag.disable();
      lag = monitorEventLoopDelay({ resolution: 10 });
      lag.enable();
      cpuFrom = process.cpuUsage();
      peakLiveCalls = 0;
      firstCall = emulator.calls.length;
      clearInterval(sampler);
      sampler = setInterval(() => {
        let live = 0;
        for (const c of emulator.calls) if (c.status === 'in-progress') live++;
        peakLiveCalls = Math.max(peakLiveCalls, live);
      }, 50);
      break;
    case 'stats': {
      const cpu = process.cpuUsage(cpuFrom);
      clearInterval(sampler);
      const calls = emulator.calls.slice(firstCall);
      const framesSent = calls.reduce((n, c) => n + c.sent.frames, 0);
      const framesSentLate = calls.reduce((n, c) => n + c.sent.framesLate, 0);
      send({ type: 'measured', lagP99Ms: lag.percentile(99) / 1e6, cpuS: (cpu.user + cpu.system) / 1e6, peakLiveCalls, framesSent, framesSentLate });
      break;
    }
    case 'close':
      lag.disable();
      clearInterval(sampler);
      void Promise.all([emulator.close(), ai.close(), realtime.close()]).finally(() => process.exit(0));
      break;
  }
});
process.on('disconnect', () => process.exit(0));
send({ type: 'ready', emulatorUrl: emulator.url, aiUrl: ai.url, realtimeUrl: realtime.url });
