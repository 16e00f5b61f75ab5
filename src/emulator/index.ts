/**
 * The provider emulator: a local server that plays Twilio (PROVIDER_A), Exotel (PROVIDER_B) and
 * Plivo (PROVIDER_C) toward Dialer, with their real REST APIs, signed callbacks, markup and media
 * streams, and a scripted callee on the other end (the local voice, DTMF, hangups). Tests and the
 * offline demo run whole calls on one machine with it.
 *
 *   const emu = await startEmulator({ dialerUrl, twilio: {...}, plivo: {...}, exotel: {...} });
 *   // Dialer: TWILIO_API_URL = PLIVO_API_URL = EXOTEL_API_URL = emu.url, EXOTEL_FLOW_URL = emu.exotelFlowUrl
 *   emu.script('+15550001111', { answer: 'answer', steps: [{ say: 'Hello?' }, { waitForAudio: 5000 }, { hangup: true }] });
 *   const call = await emu.nextCall((c) => c.to === '+15550001111');
 *   await call.ended;
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { warmUp } from '../lib/speech.js';
import { speech } from './audio.js';
import { Call, type CallContext, type CallSetup } from './call.js';
import { exotelFlowDescription, handleRest, type Registry } from './rest.js';
import type { CalleeScript, EmulatedCall, EmulatedProvider, Emulator, EmulatorOptions } from './types.js';

export type { CalleeScript, CalleeStep, EmulatedCall, EmulatedProvider, Emulator, EmulatorOptions } from './types.js';
export { Callee, SILENT_FRAME, type CalleeLine, type CalleeRecord } from './callee.js';
export { ANY_NUMBER, calleeScript, parseScenarios, readScenarios, CALLEE_KINDS, type CalleeKind } from './scenarios.js';

/** A callee that answers and stays on the line silently. */
export const SILENT_CALLEE: CalleeScript = { answer: 'answer' };

/** The `dialer emulator` command's callee: greets, listens to Dialer, says goodbye and hangs up. */
export const DEMO_CALLEE: CalleeScript = {
  answer: 'answer',
  steps: [{ say: 'Hello? Yes, this is me.' }, { waitForAudio: 8000 }, { say: 'Thank you, goodbye.' }, { hangup: true }],
};

const PATHS: Record<EmulatedProvider, string> = { PROVIDER_A: 'provider_a', PROVIDER_B: 'provider_b', PROVIDER_C: 'provider_c' };

export async function startEmulator(options: EmulatorOptions): Promise<Emulator> {
  const log = options.log ?? (() => {});
  const dialerUrl = options.dialerUrl.replace(/\/+$/, '');
  const opts: EmulatorOptions = { ...options, dialerUrl };
  const scripts = new Map<string, CalleeScript>();
  const calls: Call[] = [];
  const records: EmulatedCall[] = [];
  const waiters = new Set<{ predicate: (c: EmulatedCall) => boolean; resolve: (c: EmulatedCall) => void }>();

  const notify = () => {
    for (const w of waiters) {
      const hit = records.find(w.predicate);
      if (hit) (waiters.delete(w), w.resolve(hit));
    }
  };
  const ctx: CallContext = { options: opts, log, notify };
  const scriptFor = (n: string) => scripts.get(n) ?? opts.defaultScript ?? SILENT_CALLEE;

  let flowUrl = '';
  let learned: string | undefined;
  const explicitPath = new URL(dialerUrl).pathname.replace(/\/+$/, '') !== '';
  /** The part of a Dialer URL before /provider_x/ (its callback base), if it has one. */
  const baseOf = (u: string | undefined) => (u ? /^(https?:\/\/.*?)\/provider_[abc]\//.exec(u)?.[1] : undefined);
  const callbackBase = (hint?: string) => (explicitPath ? dialerUrl : (baseOf(hint) ?? learned ?? dialerUrl));
  /** Ended calls, oldest first, when only `keepEndedCalls` of them are kept. */
  const ended: Call[] = [];
  const forgetBeyondKept = (call: Call) => {
    ended.push(call);
    while (ended.length > Math.max(0, opts.keepEndedCalls!)) {
      const old = ended.shift()!;
      calls.splice(calls.indexOf(old), 1);
      records.splice(records.indexOf(old.rec), 1);
    }
  };
  const add = (call: Call) => {
    calls.push(call);
    records.push(call.rec);
    if (opts.keepEndedCalls !== undefined) void call.rec.ended.then(() => forgetBeyondKept(call));
    log(`[${call.provider} ${call.rec.callSid}] ${call.rec.direction} ${call.rec.from} -> ${call.rec.to}`);
    notify();
    return call;
  };
  const registry: Registry = {
    options: opts,
    log,
    get flowUrl() {
      return flowUrl;
    },
    place: (provider, from, to, setup) => {
      learned = baseOf(setup.statusUrl) ?? baseOf(setup.answerUrl) ?? learned;
      return add(new Call(ctx, provider, 'outbound', from, to, setup, scriptFor(to)));
    },
    callbackBase,
    find: (provider, id) => calls.find((c) => c.provider === provider && (c.rec.callSid === id || c.rec.requestUuid === id)),
  };

  const server = createServer((req, res) => {
    void (async () => {
      try {
        const path = new URL(req.url ?? '/', 'http://emulator').pathname;
        if (path === '/exotel/flow' || path === '/exotel/flow/') {
          res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(exotelFlowDescription(callbackBase())));
          return;
        }
        if (path === '/health') {
          res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ok: true, calls: records.length }));
          return;
        }
        if (!(await handleRest(registry, req, res))) res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'not found' }));
      } catch (err) {
        log(`request failed: ${(err as Error).stack ?? String(err)}`);
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'emulator error' }));
      }
    })();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve());
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const url = `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${address.port}`;
  flowUrl = `${url}/exotel/flow`;
  // The callees' lines are made ahead, so a callee speaks the moment its stream opens.
  const prepareLines = (script: CalleeScript | undefined) => {
    for (const step of script?.steps ?? []) if ('say' in step) void speech(step.say, options.voice).catch(() => undefined);
  };
  warmUp(options.voice);
  prepareLines(options.defaultScript);

  return {
    url,
    exotelFlowUrl: flowUrl,
    calls: records,
    script(number, script) {
      scripts.set(number, script);
      prepareLines(script);
    },
    nextCall(predicate = () => true, timeoutMs = 10_000) {
      const hit = records.find(predicate);
      if (hit) return Promise.resolve(hit);
      return new Promise<EmulatedCall>((resolve, reject) => {
        const waiter = {
          predicate,
          resolve: (c: EmulatedCall) => (clearTimeout(timer), resolve(c)),
        };
        const timer = setTimeout(() => (waiters.delete(waiter), reject(new Error(`no emulated call matched within ${timeoutMs} ms`))), timeoutMs);
        waiters.add(waiter);
      });
    },
    async inbound({ provider, from, to }) {
      const path = PATHS[provider];
      const base = callbackBase();
      const setup: CallSetup = {
        answerUrl: `${base}/${path}/answer`,
        answerMethod: provider === 'PROVIDER_B' ? 'GET' : 'POST',
        statusUrl: `${base}/${path}/callback/status`,
        statusMethod: 'POST',
        statusEvents: new Set(provider === 'PROVIDER_B' ? ['terminal'] : ['completed']),
      };
      const call = add(new Call(ctx, provider, 'inbound', from, to, setup, scriptFor(from)));
      void call.runInbound();
      return call.rec;
    },
    async close() {
      await Promise.all(calls.map((c) => c.finish(c.answeredAt ? 'completed' : c.provider === 'PROVIDER_C' ? 'cancel' : c.provider === 'PROVIDER_A' ? 'canceled' : 'no-answer', 'close')));
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
