/** A case's callee as the provider emulator plays it on the sandbox line. */
import type { CalleeScript, CalleeStep } from '../emulator/index.js';
import type { Callee } from './schema.js';

const ANSWERS = { person: 'answer', voicemail: 'voicemail', busy: 'busy', no_answer: 'no_answer' } as const;

export function calleeScript(callee: Callee): CalleeScript {
  const steps = (callee.steps ?? []).map((s): CalleeStep => {
    if ('say' in s) return { say: s.say, label: s.say.slice(0, 40) };
    if ('wait_for_agent' in s) return { waitForAudio: s.timeout_ms ?? 15_000 };
    if ('silence_ms' in s) return { wait: s.silence_ms };
    if ('keys' in s) return { dtmf: s.keys };
    return { hangup: true };
  });
  return { answer: ANSWERS[callee.answer ?? 'person'], ringMs: 200, steps, maxSeconds: callee.max_seconds ?? 90 };
}
