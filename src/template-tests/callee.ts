/** A case's callee as the provider emulator plays it on the sandbox line. */
import type { CalleeScript, CalleeStep } from '../emulator/index.js';
import type { PersonaLine } from './persona.js';
import type { Callee } from './schema.js';

const ANSWERS = { person: 'answer', voicemail: 'voicemail', busy: 'busy', no_answer: 'no_answer' } as const;
/** How long a persona waits for the agent to speak before it speaks anyway. */
const PERSONA_WAIT_MS = 15_000;
export const DEFAULT_MAX_TURNS = 6;

/**
 * The emulator's script of a callee. A persona's (`nextLine`: the customer's next line, written when
 * its turn comes) waits for the agent, speaks, and so on, until it hangs up or has spoken `max_turns` times.
 */
export function calleeScript(callee: Callee, nextLine?: () => Promise<PersonaLine>): CalleeScript {
  const base = { answer: ANSWERS[callee.answer ?? 'person'], ringMs: 200, maxSeconds: callee.max_seconds ?? 90 };
  if (callee.persona !== undefined && nextLine) {
    let turns = 0;
    const turn = async (): Promise<CalleeStep[]> => {
      if (turns >= (callee.max_turns ?? DEFAULT_MAX_TURNS)) return [{ hangup: true }];
      turns++;
      const next = await nextLine();
      const say: CalleeStep[] = next.line ? [{ say: next.line, label: next.line.slice(0, 40) }] : [];
      return next.hangUp ? [...say, { hangup: true }] : [...say, { waitForAudio: PERSONA_WAIT_MS }, { decide: turn }];
    };
    return { ...base, steps: [{ waitForAudio: PERSONA_WAIT_MS }, { decide: turn }] };
  }
  const steps = (callee.steps ?? []).map((s): CalleeStep => {
    if ('say' in s) return { say: s.say, label: s.say.slice(0, 40) };
    if ('wait_for_agent' in s) return { waitForAudio: s.timeout_ms ?? 15_000 };
    if ('silence_ms' in s) return { wait: s.silence_ms };
    if ('keys' in s) return { dtmf: s.keys };
    return { hangup: true };
  });
  return { ...base, steps };
}
