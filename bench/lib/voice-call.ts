/**
 * The call bench:voice and bench:embedded place: the agent greets and asks to confirm an order, the
 * callee answers, the agent calls `confirm_order`, says goodbye and ends the call `confirmed`
 * (docs/voice-benchmark.md, "One call, one round").
 */
import type { CalleeScript } from '../../src/emulator/index.js';

export const CONFIRM_FLOW = {
  initial_node: 'greet',
  nodes: [
    { node_name: 'greet', task_messages: [{ role: 'system', content: 'Ask to confirm the order.' }], functions: [{ name: 'confirm_order', properties: { confirmed: { type: 'boolean' } }, required: ['confirmed'], transition_to: 'bye' }] },
    { node_name: 'bye', task_messages: [{ role: 'system', content: 'Bye.' }], pre_actions: [{ type: 'tts_say', text: 'Thank you, goodbye!' }, { type: 'end_conversation', outcome: 'confirmed' }] },
  ],
};

/**
 * The callee: waits for the greeting, answers, waits for the goodbye. The line has no comma: flite
 * pauses at one for longer than the VAD's 128 ms, and the bench's transcription server answers every
 * segment with the whole line, so each segment became a full answer with a speculative reply of its own.
 */
export function confirmingCallee(ringMs: number, holdMs = 0): CalleeScript {
  const steps = [{ waitForAudio: 15_000 }, ...(holdMs > 0 ? [{ wait: holdMs }] : []), { say: 'Yes please confirm it.' }, { waitForAudio: 15_000 }];
  return { answer: 'answer', ringMs, steps, maxSeconds: 45 + Math.ceil(holdMs / 1000) };
}

/**
 * The flow for a callee who holds `holdMs` in silence before answering: the greeting's node waits
 * that long and 10 s more before it prompts again (its idle time), so the call stays as it is.
 */
export function confirmFlow(holdMs = 0): typeof CONFIRM_FLOW {
  if (holdMs <= 0) return CONFIRM_FLOW;
  const [greet, ...rest] = CONFIRM_FLOW.nodes;
  return { ...CONFIRM_FLOW, nodes: [{ ...greet!, idle_timeout_seconds: Math.ceil(holdMs / 1000) + 10 }, ...rest] as typeof CONFIRM_FLOW.nodes };
}
