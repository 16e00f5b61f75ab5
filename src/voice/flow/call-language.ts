/**
 * The language a flow's conversation speaks now, among its template's (voice/language.ts): the
 * transcript's marks, the LLM's instruction line, and the switches (each kept on the record).
 */
import { declaredLanguage, languageInstruction, refusalNote, type LanguageSwitch } from '../language.js';
import type { ChatMessage } from '../services.js';

export class CallLanguage {
  /** The language spoken now (undefined: the template declares none). */
  private spoken: string | undefined;
  /** The language the speech-to-text reports that the call does not speak, while the caller goes on in it. */
  private unspoken: string | undefined;

  constructor(
    readonly declared: readonly string[],
    private readonly switches: LanguageSwitch[],
    private readonly now: () => string,
    /** The call switched: its speech-to-text and voice follow. */
    private readonly onSwitch?: (language: string) => void,
  ) {
    this.spoken = declared[0];
  }

  get current(): string | undefined {
    return this.spoken;
  }

  /** A transcript line's language mark (none when the template declares no languages). */
  mark(): { language?: string } {
    return this.spoken ? { language: this.spoken } : {};
  }

  /**
   * The system lines after the role messages: which language to answer in, and while the caller
   * speaks a language the call does not, to say (in the call's) which languages it speaks.
   */
  instruction(): ChatMessage[] {
    if (!this.spoken) return [];
    const line = (content: string): ChatMessage => ({ role: 'system', content });
    return [line(languageInstruction(this.spoken, this.declared)), ...(this.unspoken ? [line(refusalNote(this.unspoken, this.spoken, this.declared))] : [])];
  }

  /** The speech-to-text heard the caller's turn in `reported`: the call switches to it, or (not declared) refuses it, once. */
  heard(reported: string): void {
    if (!this.spoken) return;
    const declared = declaredLanguage(this.declared, reported);
    if (declared || reported !== this.unspoken) this.switchTo(reported, 'detected');
  }

  /** Switches to `asked` when it is a declared language; otherwise records the refusal. Returns the language spoken now. */
  switchTo(asked: string, by: LanguageSwitch['by']): { refused: boolean; language: string | undefined } {
    const from = this.spoken;
    const to = from ? declaredLanguage(this.declared, asked) : undefined;
    if (!from) return { refused: true, language: from };
    if (to === from) {
      this.unspoken = undefined;
      return { refused: false, language: from };
    }
    const at = this.now();
    if (!to) {
      if (by === 'detected') this.unspoken = asked;
      this.switches.push({ from, to: asked, by, at, refused: `not one of the call's languages (${this.declared.join(', ')})` });
      return { refused: true, language: from };
    }
    this.unspoken = undefined;
    this.spoken = to;
    this.switches.push({ from, to, by, at });
    this.onSwitch?.(to);
    return { refused: false, language: to };
  }
}
