/**
 * A persona callee: the configured LLM plays the customer. At each of the customer's turns it is
 * given who it plays, its goal and the conversation so far (the agent's lines as the other party's)
 * and writes the customer's next line; "[hang up]" in its answer ends the call after that line.
 */
import type { LLM } from '../voice/index.js';

export interface PersonaSpec {
  persona: string;
  goal: string;
}

export interface PersonaLine {
  /** What the customer says next (empty: nothing, only the hang-up). */
  line: string;
  hangUp: boolean;
}

/** Writes the customer's next line from the conversation so far (roles as the call's transcript has them: user is the customer). */
export type PersonaPlayer = (spec: PersonaSpec, transcript: Array<{ role: string; content: string }>) => Promise<PersonaLine>;

const HANG_UP = /\[\s*hang\s*up\s*\]/i;

function instructions(spec: PersonaSpec): string {
  return [
    'You are playing a customer who has just answered a phone call from a company\'s voice agent; your answers test the agent.',
    `Who you are: ${spec.persona}`,
    `Your goal on this call: ${spec.goal}`,
    'Answer with only the next thing you say aloud: one or two short spoken sentences, no stage directions, no quotes.',
    'When your goal is met, or the call cannot go further, say goodbye and add [hang up].',
  ].join('\n');
}

export function llmPersona(llm: LLM, timeoutMs = 15_000): PersonaPlayer {
  return async (spec, transcript) => {
    // The model speaks as the customer: the agent's lines are the other party's (user), the customer's its own (assistant).
    const messages = [
      { role: 'system' as const, content: instructions(spec) },
      ...transcript.filter((t) => t.content.trim()).map((t) => ({ role: t.role === 'user' ? ('assistant' as const) : ('user' as const), content: t.content })),
    ];
    if (messages.length === 1) messages.push({ role: 'user', content: '(The phone rings and you answer; nobody has spoken yet.)' });
    let text = '';
    for await (const event of llm.chat({ messages, signal: AbortSignal.timeout(timeoutMs) })) if (event.type === 'text') text += event.text;
    return { line: text.replace(new RegExp(HANG_UP, 'gi'), '').trim(), hangUp: HANG_UP.test(text) };
  };
}
