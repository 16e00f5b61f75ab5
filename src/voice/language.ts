/**
 * The languages of a call: the template declares them (`agent.languages`, the first the one the
 * call starts in) and the call switches between them mid-call, when the speech-to-text hears
 * another of them (`agent.detect_language`) or the flow calls the built-in `switch_language`.
 *
 * Terminology
 * - declared language: a BCP-47 tag of the template's `agent.languages` (en-US, es-ES, hi-IN).
 * - current language: the one the call speaks now: its speech-to-text listens in it, its voice
 *   speaks it, the LLM is told to answer in it, and each transcript line is marked with it.
 * - switch: the current language changes; a switch to a language the template did not declare is
 *   refused, recorded, and the LLM is told to say (in the current language) which it speaks.
 */
import type { AgentChoice } from './agent-choice.js';
import type { FieldError } from '../lib/errors.js';
import type { Flow } from './flow/schema.js';

/** A switch as the call record keeps it (`metaData.language_switches`). */
export interface LanguageSwitch {
  from: string;
  /** The language asked for (as the speech-to-text or the LLM named it, when it was refused). */
  to: string;
  by: 'detected' | 'function';
  at: string;
  /** Why it was refused: the call went on in `from`. */
  refused?: string;
}

const names = new Intl.DisplayNames(['en'], { type: 'language' });

/** "Spanish", "English": the language's English name, the tag itself when it has none. */
export function languageName(tag: string): string {
  try {
    return names.of(tag.split('-')[0]!) ?? tag;
  } catch {
    return tag;
  }
}

const base = (tag: string) => tag.toLowerCase().split(/[-_]/)[0]!;

/**
 * The declared language a reported one stands for: the same tag, else the first declared one of the
 * same language (a speech-to-text reports `es` or `spanish` for es-ES). Undefined: not declared.
 */
export function declaredLanguage(declared: readonly string[], reported: string): string | undefined {
  const wanted = reported.trim().toLowerCase();
  const exact = declared.find((d) => d.toLowerCase() === wanted);
  if (exact) return exact;
  const primary = base(wanted);
  return declared.find((d) => base(d) === primary) ?? declared.find((d) => languageName(d).toLowerCase() === wanted);
}

/** The line that tells the LLM which language to answer in. */
export function languageInstruction(tag: string, declared: readonly string[]): string {
  const others = declared.filter((d) => d !== tag);
  return (
    `Speak ${languageName(tag)} (${tag}): answer the caller in ${languageName(tag)} only.` +
    (others.length ? ` If the caller switches to ${others.map(languageName).join(' or ')}, call switch_language first.` : '')
  );
}

/** What the LLM is told when a switch is refused: say, in the current language, which languages the call speaks. */
export function refusalNote(asked: string, current: string, declared: readonly string[]): string {
  return `The caller asked for ${languageName(asked)} (${asked}), which this call does not speak. Answer in ${languageName(current)}: say briefly that you can speak ${declared.map(languageName).join(' and ')}.`;
}

/** The languages a template's calls speak: none declared, one call language (the service default). */
export function declaredLanguages(choice: AgentChoice | null | undefined): string[] {
  return choice?.languages ?? [];
}

/** A flow that offers switch_language needs languages to switch between. */
export function flowLanguageErrors(flow: unknown, choice: AgentChoice | null | undefined): FieldError[] {
  const nodes = (flow as Partial<Flow> | null)?.nodes;
  if (!Array.isArray(nodes) || declaredLanguages(choice).length >= 2) return [];
  const errors: FieldError[] = [];
  nodes.forEach((node, n) =>
    (Array.isArray(node?.functions) ? node.functions : []).forEach((fn, f) => {
      if (fn?.type === 'builtin' && fn.name === 'switch_language') {
        errors.push({ path: `/flow/nodes/${n}/functions/${f}`, message: 'switch_language needs at least two languages in the template\'s agent.languages' });
      }
    }),
  );
  return errors;
}
