/**
 * Callee kinds: the people and machines a campaign meets, as ready-made callee scripts, and a
 * scenarios file (JSON: number -> kind) that `dialer emulator --scenarios FILE` plays. docs/campaigns.md
 * shows each kind; a `script` gives the steps by hand.
 */
import fs from 'node:fs';
import type { CalleeScript, CalleeStep } from './types.js';

export type CalleeKind =
  /** An answering machine: its greeting, a beep, then it records until Dialer has spoken (or `recordMs`), and hangs up. */
  | { kind: 'voicemail'; greeting?: string; beep?: { hz?: number; ms?: number } | false; recordMs?: number; hangupBeforeBeep?: boolean }
  /** A phone menu: its prompt, then it waits for `keys`; when they come it says `then`, else it repeats the prompt once and hangs up. */
  | { kind: 'menu'; prompt?: string; keys: string; then?: string; timeoutMs?: number }
  /** A person who asks not to be called again, hears Dialer out and hangs up (waiting at most `listenMs` for Dialer each time, default 15 s). */
  | { kind: 'opt_out'; says?: string; listenMs?: number }
  /** A person who answers, says each line after Dialer has spoken (waiting at most `listenMs`, default 15 s), and hangs up. */
  | { kind: 'person'; says?: string[]; listenMs?: number }
  | { kind: 'busy' }
  | { kind: 'no_answer' }
  /** Steps given by hand. */
  | { kind: 'script'; script: CalleeScript };

export const CALLEE_KINDS = ['voicemail', 'menu', 'opt_out', 'person', 'busy', 'no_answer', 'script'] as const;

const GREETING = 'Hi, you have reached the voicemail of Ana. I cannot take your call right now. Please leave a message after the tone.';
const MENU = 'Thank you for calling Acme. For sales, press 2. For support, press 3.';
const OPT_OUT = 'Please do not call me again. Take my number off your list.';

/** The callee script of a kind. */
export function calleeScript(kind: CalleeKind): CalleeScript {
  switch (kind.kind) {
    case 'voicemail': {
      const steps: CalleeStep[] = [{ say: kind.greeting ?? GREETING }];
      if (kind.hangupBeforeBeep) return { answer: 'voicemail', steps: [...steps, { hangup: true }], maxSeconds: 60 };
      if (kind.beep !== false) steps.push({ beep: kind.beep ?? {} });
      steps.push({ waitForAudio: kind.recordMs ?? 30_000 }, { hangup: true });
      return { answer: 'voicemail', steps, maxSeconds: 90 };
    }
    case 'menu':
      return {
        answer: 'answer',
        steps: [
          { say: kind.prompt ?? MENU },
          {
            expectDigits: kind.keys,
            timeoutMs: kind.timeoutMs ?? 20_000,
            else: [{ say: kind.prompt ?? MENU }, { expectDigits: kind.keys, timeoutMs: kind.timeoutMs ?? 20_000, else: [{ hangup: true }] }, ...after(kind.then)],
          },
          ...after(kind.then),
        ],
        maxSeconds: 90,
      };
    case 'opt_out': {
      const listen = kind.listenMs ?? 15_000;
      return { answer: 'answer', steps: [{ waitForAudio: listen }, { say: kind.says ?? OPT_OUT }, { waitForAudio: listen }, { hangup: true }], maxSeconds: Math.max(60, (3 * listen) / 1000) };
    }
    case 'person': {
      const listen = kind.listenMs ?? 15_000;
      const lines = kind.says ?? ['Hello? Yes, this is me.', 'Thank you, goodbye.'];
      return {
        answer: 'answer',
        steps: [...lines.flatMap((line): CalleeStep[] => [{ waitForAudio: listen }, { say: line }]), { waitForAudio: listen }, { hangup: true }],
        maxSeconds: Math.max(90, ((lines.length + 2) * listen) / 1000),
      };
    }
    case 'busy':
      return { answer: 'busy' };
    case 'no_answer':
      return { answer: 'no_answer' };
    case 'script':
      return kind.script;
  }
}

/** After the right keys: say `then`, listen, hang up (nothing when there is no `then`: stay on the line). */
function after(then: string | undefined): CalleeStep[] {
  return then ? [{ say: then }, { waitForAudio: 20_000 }, { hangup: true }] : [];
}

const E164 = /^\+[1-9]\d{6,14}$/;

/** The key of a scenarios file's entry for every number it does not name. */
export const ANY_NUMBER = '*';

/**
 * Reads a scenarios file: `{"+14155550101": {"kind": "voicemail"}, ..., "*": {"kind": "busy"}}`
 * (`*`: every other number). Throws with the offending number and field.
 */
export function readScenarios(file: string): Map<string, CalleeScript> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (err) {
    throw new Error(`${file}: ${(err as Error).message}`);
  }
  return parseScenarios(parsed, file);
}

export function parseScenarios(parsed: unknown, where = 'scenarios'): Map<string, CalleeScript> {
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error(`${where}: must be a JSON object of phone number -> callee`);
  const out = new Map<string, CalleeScript>();
  for (const [number, value] of Object.entries(parsed as Record<string, unknown>)) {
    if (number !== ANY_NUMBER && !E164.test(number)) throw new Error(`${where}: ${JSON.stringify(number)} is not an E.164 number such as +14155550101 (or "*" for every other number)`);
    const kind = value as { kind?: unknown } | null;
    if (!kind || typeof kind !== 'object' || !(CALLEE_KINDS as readonly unknown[]).includes(kind.kind)) {
      throw new Error(`${where}: ${number}: "kind" must be one of ${CALLEE_KINDS.join(', ')}`);
    }
    if (kind.kind === 'menu' && (typeof (kind as { keys?: unknown }).keys !== 'string' || !/^[0-9*#]+$/.test((kind as { keys: string }).keys))) {
      throw new Error(`${where}: ${number}: a menu needs "keys" (the keys it waits for: 0-9, *, #)`);
    }
    if (kind.kind === 'script' && typeof (kind as { script?: { answer?: unknown } }).script?.answer !== 'string') {
      throw new Error(`${where}: ${number}: a script needs "script": {"answer": ..., "steps": [...]}`);
    }
    out.set(number, calleeScript(kind as CalleeKind));
  }
  return out;
}
