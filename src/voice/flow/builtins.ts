/**
 * Dialer's built-in flow functions, offered in a node by name (`{"name": "send_dtmf", "type":
 * "builtin"}`), and `opt_out` in every node when the configuration enables opting out:
 * - send_dtmf: presses keys (0-9, *, #, w for half a second) to get through a phone menu;
 * - opt_out: the callee asks not to be called again: the agent confirms briefly and the call ends
 *   with outcome OPTED_OUT (Dialer then blacklists the number);
 * - schedule_callback: the callee chose a time to be called back (ISO 8601); the lead is called
 *   again then, inside its calling window;
 * - search_knowledge: looks up the business's documents (the knowledge base) for a question; the
 *   best passages go back to the LLM, and which ones were used go on the call record;
 * - switch_language: the caller speaks (or asks for) another of the template's languages: the
 *   call's speech-to-text, voice and the LLM's instruction switch to it (voice/language.ts).
 */
import { DateTime } from 'luxon';
import type { BuiltinFunction, FlowFunction, FlowNode } from './schema.js';
import type { KnowledgeChunk, SearchKnowledge, ToolSpec } from '../services.js';
import { DTMF_SEQUENCE } from '../../lib/tones.js';
import { languageName } from '../language.js';
import type { CallLanguage } from './call-language.js';

/** The outcome of a call the callee opted out of. */
export const OPTED_OUT = 'OPTED_OUT';
/** The outcome of a call that ended with a callback scheduled and no outcome of its own. */
export const CALLBACK_REQUESTED = 'callback_requested';
/** How far ahead a callback may be asked for. */
const MAX_CALLBACK_DAYS = 90;

export interface BuiltinDeps {
  now: () => Date;
  /** The zone a callback time without an offset is read in (the call's calling-window zone). */
  timeZone: string;
  /** Plays keys on the call; undefined where the call cannot (a browser session). */
  sendDigits?: (digits: string) => Promise<void>;
  /** The call's knowledge base; undefined where the call has none to search. */
  searchKnowledge?: SearchKnowledge;
  /** The call's languages (agent.languages); undefined: the call speaks one. */
  languages?: CallLanguage;
}

/** A search_knowledge call as the call record keeps it: the question and the passages it answered with. */
export interface KnowledgeLookup {
  query: string;
  at: string;
  chunks: Array<Omit<KnowledgeChunk, 'text'>>;
}

/** What a built-in call did, for the flow's record and what follows. */
export interface BuiltinOutcome {
  result: Record<string, unknown>;
  error?: string;
  /** Keys pressed (for the transcript). */
  keys?: string;
  /** The conversation ends after one more reply (the agent's brief confirmation), with this outcome. */
  endAfterReply?: string;
  optedOut?: { reason?: string; at: string };
  callback?: { at: string; requested: string; reason?: string };
  knowledge?: KnowledgeLookup;
}

/** A built-in's function as the LLM sees it and as its arguments are checked. */
export function builtinFunction(name: BuiltinFunction, declared: Pick<FlowFunction, 'description'> | undefined, deps: BuiltinDeps): FlowFunction {
  const own = declared?.description;
  switch (name) {
    case 'send_dtmf':
      return {
        name,
        description: own ?? 'Press keys on the phone keypad, to get through an automated phone menu. Use it when a recording asks you to press a key.',
        properties: { digits: { type: 'string', description: 'The keys to press, in order: 0-9, * and #; w waits half a second' } },
        required: ['digits'],
      };
    case 'opt_out':
      return {
        name,
        description: own ?? 'The person asks not to be called again (remove me from your list, stop calling me). Call this, then confirm in one short sentence and say goodbye.',
        properties: { reason: { type: 'string', description: 'What they said, briefly' } },
      };
    case 'schedule_callback': {
      const now = DateTime.fromJSDate(deps.now(), { zone: deps.timeZone });
      return {
        name,
        description:
          own ??
          `The person asks to be called back at a time they chose. Now is ${now.toISO({ suppressMilliseconds: true })} (${deps.timeZone}).`,
        properties: {
          time: { type: 'string', description: 'When to call back: ISO 8601 date and time, e.g. 2026-03-14T10:00:00+01:00' },
          reason: { type: 'string', description: 'Why, briefly' },
        },
        required: ['time'],
      };
    }
    case 'search_knowledge':
      return {
        name,
        description:
          own ??
          "Look up the business's documents (prices, policies, products, opening hours...) before answering a question you do not know the answer to. Answer only from what it returns.",
        properties: { query: { type: 'string', description: 'The question, or the words to look for' } },
        required: ['query'],
      };
    case 'switch_language': {
      const declared = deps.languages?.declared ?? [];
      return {
        name,
        description: own ?? `The caller speaks, or asks for, another language: switch the call to it before answering. This call speaks ${declared.map((d) => `${languageName(d)} (${d})`).join(', ') || 'one language'}.`,
        // No enum: a language outside the list gets its own answer (say which the call speaks), not "invalid arguments".
        properties: { language: { type: 'string', description: `The language to speak: one of ${declared.join(', ') || 'the call\'s'}` } },
        required: ['language'],
      };
    }
  }
}

/** Runs a built-in with checked arguments. Never throws: failures go back to the LLM as `error`. */
export async function runBuiltin(name: BuiltinFunction, args: Record<string, unknown>, deps: BuiltinDeps): Promise<BuiltinOutcome> {
  const at = deps.now().toISOString();
  switch (name) {
    case 'send_dtmf': {
      const digits = String(args.digits ?? '').replace(/\s+/g, '');
      if (!DTMF_SEQUENCE.test(digits)) return failed(`${JSON.stringify(args.digits)} is not a key sequence: use 0-9, *, # and w`);
      if (!deps.sendDigits) return failed('keys cannot be pressed on this call');
      try {
        await deps.sendDigits(digits);
      } catch (err) {
        return { ...failed(`the keys could not be pressed: ${(err as Error).message}`), keys: digits };
      }
      return { result: { ok: true, pressed: digits }, keys: digits };
    }
    case 'opt_out': {
      const reason = typeof args.reason === 'string' && args.reason.trim() ? args.reason.trim().slice(0, 500) : undefined;
      return {
        result: { ok: true, note: 'They will not be called again. Confirm that in one short sentence and say goodbye.' },
        endAfterReply: OPTED_OUT,
        optedOut: { ...(reason ? { reason } : {}), at },
      };
    }
    case 'schedule_callback': {
      const requested = String(args.time ?? '');
      const when = DateTime.fromISO(requested, { zone: deps.timeZone, setZone: true });
      if (!when.isValid) return failed(`${JSON.stringify(requested)} is not an ISO 8601 date and time`);
      const now = deps.now().getTime();
      if (when.toMillis() <= now) return failed('that time has passed: ask for a time in the future');
      if (when.toMillis() > now + MAX_CALLBACK_DAYS * 86_400_000) return failed(`a callback can be at most ${MAX_CALLBACK_DAYS} days ahead`);
      const reason = typeof args.reason === 'string' && args.reason.trim() ? args.reason.trim().slice(0, 500) : undefined;
      const callbackAt = when.toUTC().toISO({ suppressMilliseconds: true })!;
      return { result: { ok: true, scheduled_for: callbackAt }, callback: { at: callbackAt, requested, ...(reason ? { reason } : {}) } };
    }
    case 'search_knowledge': {
      const query = String(args.query ?? '').trim().slice(0, 1000);
      if (!query) return failed('say what to look for');
      if (!deps.searchKnowledge) return failed('there is no knowledge base on this call');
      let chunks: KnowledgeChunk[];
      try {
        chunks = await deps.searchKnowledge(query);
      } catch (err) {
        return failed(`the knowledge base could not be searched: ${(err as Error).message}`);
      }
      const knowledge: KnowledgeLookup = { query, at, chunks: chunks.map(({ text: _text, ...c }) => c) };
      if (!chunks.length) return { result: { ok: true, found: 0, note: 'Nothing in the documents answers this: say you do not know.' }, knowledge };
      return { result: { ok: true, found: chunks.length, passages: chunks.map((c) => ({ source: c.title, text: c.text })) }, knowledge };
    }
    case 'switch_language': {
      const asked = String(args.language ?? '').trim().slice(0, 35);
      if (!asked) return failed('say which language');
      const declared = deps.languages?.declared ?? [];
      const now = deps.languages?.switchTo(asked, 'function');
      if (!now?.language || now.refused) {
        return failed(`${asked} is not a language of this call (${declared.join(', ') || 'it speaks one'}): go on in the call's language and say which languages you speak`);
      }
      return { result: { ok: true, language: now.language, note: `Speak ${languageName(now.language)} from now on.` } };
    }
  }
}

function failed(error: string): BuiltinOutcome {
  return { result: { ok: false, error }, error };
}

/** A node's functions as the LLM sees them, by name (built-ins resolved). */
export type NodeFunctions = Map<string, { fn: FlowFunction; builtin: boolean }>;

/** The node's functions with the built-ins resolved, and opt_out when the configuration offers it everywhere (`optOut`). */
export function nodeFunctions(node: FlowNode, optOut: boolean, deps: BuiltinDeps): NodeFunctions {
  const functions: NodeFunctions = new Map();
  for (const f of node.functions ?? []) {
    const builtin = f.type === 'builtin';
    functions.set(f.name, { fn: builtin ? builtinFunction(f.name as BuiltinFunction, f, deps) : f, builtin });
  }
  if (optOut && !functions.has('opt_out')) functions.set('opt_out', { fn: builtinFunction('opt_out', undefined, deps), builtin: true });
  return functions;
}

/** The tools the LLM is offered for these functions. */
export function toolsOf(functions: NodeFunctions): ToolSpec[] {
  return [...functions.values()].map(({ fn: f }) => ({
    name: f.name,
    ...(f.description ? { description: f.description } : {}),
    parameters: { type: 'object', properties: f.properties ?? {}, required: f.required ?? [] },
  }));
}
