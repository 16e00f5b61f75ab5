/**
 * What a warm transfer says (a function's `warm_transfer`): the briefing the human hears (the
 * template's text, else the LLM's summary of the transcript, else a fixed sentence), and the words
 * the caller hears while they wait and when the human declines or cannot be reached.
 */
import type { LLM, LlmUsage } from '../services.js';
import type { WarmTransfer } from './schema.js';
import type { TranscriptLine } from './types.js';

export const HOLD_MESSAGE = 'Please hold for a moment while I brief a colleague who can help you.';
export const DECLINED_MESSAGE = 'I am sorry, my colleague cannot take the call right now. Let me help you myself.';
export const NO_ANSWER_MESSAGE = 'I am sorry, nobody is available right now. We will call you back soon. Goodbye!';
export const CALLBACK_AFTER_MINUTES = 60;
/** How long the LLM may take to write the briefing before the fixed sentence is used. */
const BRIEFING_TIMEOUT_MS = 8000;

const BRIEFING_PROMPT =
  'You brief a human colleague who is about to take over a phone call from an automated agent. ' +
  'From the transcript below, say in at most two short spoken sentences who the customer is and what they want. ' +
  'Plain words only: no lists, no markdown, no greeting.';

export interface Briefing {
  text: string;
  source: 'template' | 'llm' | 'default';
}

export interface BriefingDeps {
  llm: LLM;
  /** `{variable}` substitution with the function's arguments over the call's variables. */
  fill(text: string): string;
  /** The customer's name, when the call has one (the fixed sentence names them). */
  customerName: string | undefined;
  transcription: readonly TranscriptLine[];
  /** The LLM's tokens are counted on the call's usage. */
  usage(used: LlmUsage): void;
  error(message: string): void;
}

/** The briefing a warm transfer speaks to the human. */
export async function writeBriefing(settings: WarmTransfer, deps: BriefingDeps): Promise<Briefing> {
  if (settings.briefing) return { text: deps.fill(settings.briefing), source: 'template' };
  const lines = deps.transcription.filter((l) => !l.disclosure).map((l) => `${l.role === 'user' ? 'Customer' : 'Agent'}: ${l.content}`);
  if (lines.length > 0 && !deps.llm.voiced) {
    try {
      let text = '';
      const request = { messages: [{ role: 'system' as const, content: BRIEFING_PROMPT }, { role: 'user' as const, content: lines.join('\n') }], signal: AbortSignal.timeout(BRIEFING_TIMEOUT_MS) };
      for await (const event of deps.llm.chat(request)) {
        if (event.type === 'text') text += event.text;
        else if (event.type === 'done' && event.usage) deps.usage(event.usage);
      }
      text = text.replace(/\s+/g, ' ').trim();
      if (text) return { text, source: 'llm' };
      deps.error('warm transfer: the LLM wrote an empty briefing; the fixed one was spoken');
    } catch (err) {
      deps.error(`warm transfer: the briefing could not be written (${(err as Error).message}); the fixed one was spoken`);
    }
  }
  const who = deps.customerName ? `the customer ${deps.customerName}` : 'a customer';
  return { text: `You have a call transferred from the automated agent: ${who} asked to speak with a person.`, source: 'default' };
}

/** When a lead whose human could not be reached is called back. */
export function callbackAt(settings: WarmTransfer, now: Date): string {
  const minutes = settings.callback_after_minutes ?? CALLBACK_AFTER_MINUTES;
  return new Date(now.getTime() + minutes * 60_000).toISOString().replace(/\.\d{3}Z$/, 'Z');
}
