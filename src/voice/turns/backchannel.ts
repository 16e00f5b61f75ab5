/**
 * Backchannels: what a listener says to show they are following ("mm-hmm", "yeah", "right"), not to
 * take the turn. Speech over the agent that is only backchannel does not stop it.
 *
 * A lexicon per language (phrases, lower case, without punctuation); a template adds its own
 * phrases (`turn_taking.backchannels`). Text is a backchannel when its words are covered by lexicon
 * phrases end to end ("yeah okay", "mm-hmm right") and there are fewer than `minWords` of them.
 */

export const BACKCHANNELS: Readonly<Record<string, readonly string[]>> = {
  en: [
    'mm-hmm', 'mhm', 'mm', 'hmm', 'uh-huh', 'uh huh', 'um-hum', 'yeah', 'yea', 'yep', 'yup', 'yes', 'ya',
    'okay', 'ok', 'right', 'alright', 'all right', 'sure', 'i see', 'got it', 'oh', 'ah', 'aha', 'ah ha',
    'great', 'good', 'fine', 'cool', 'nice', 'exactly', 'true', 'indeed', 'of course', 'i know',
    'sounds good', 'makes sense', 'go on', 'go ahead', 'right right', 'uh', 'oh okay', 'oh i see',
  ],
  es: ['ajá', 'aja', 'mhm', 'sí', 'si', 'vale', 'claro', 'ya', 'bueno', 'de acuerdo', 'entiendo', 'ok', 'okay', 'exacto', 'perfecto'],
  fr: ['mhm', 'hum', 'oui', 'ouais', "d'accord", 'daccord', 'ok', 'okay', 'je vois', 'bien sûr', 'exactement', 'voilà', 'ah bon', 'super'],
  de: ['mhm', 'hm', 'ja', 'jaja', 'genau', 'okay', 'ok', 'alles klar', 'klar', 'stimmt', 'richtig', 'ach so', 'verstehe', 'gut', 'super'],
  pt: ['ahã', 'aham', 'mhm', 'sim', 'tá', 'ta', 'certo', 'claro', 'ok', 'okay', 'entendi', 'exato', 'beleza', 'pois é'],
  hi: ['haan', 'han', 'haanji', 'haan ji', 'ji', 'achha', 'acha', 'theek hai', 'thik hai', 'hmm', 'ok', 'okay', 'sahi', 'bilkul', 'हाँ', 'हां', 'जी', 'हाँ जी', 'अच्छा', 'ठीक है', 'सही', 'बिल्कुल'],
};

/** The language part of a code such as en-US. */
export const baseLanguage = (language: string): string => language.toLowerCase().split(/[-_]/)[0]!;

/**
 * Lower case, punctuation dropped (hyphens and apostrophes inside words kept), spaces collapsed.
 * Combining marks are part of their word (Devanagari's vowel signs and virama: अच्छा is one word).
 */
export function normalise(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\s'-]+/gu, ' ')
    .replace(/(^|\s)['-]+|['-]+(?=\s|$)/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

export const words = (text: string): string[] => (normalise(text) ? normalise(text).split(' ') : []);

export class BackchannelFilter {
  /** Phrases as word lists, longest first. */
  private readonly phrases: string[][];

  constructor(
    language: string,
    extra: readonly string[] = [],
    /** This many words or more is never a backchannel, whatever they are. */
    private readonly minWords = 3,
  ) {
    const lexicon = [...(BACKCHANNELS[baseLanguage(language)] ?? BACKCHANNELS.en!), ...extra];
    this.phrases = [...new Set(lexicon.map(normalise).filter(Boolean))].map((p) => p.split(' ')).sort((a, b) => b.length - a.length);
  }

  /** Whether `text` (an interim or final transcript) is only backchannel. Empty text is not. */
  isBackchannel(text: string): boolean {
    const w = words(text);
    if (w.length === 0 || w.length >= this.minWords) return false;
    return this.covers(w, 0);
  }

  /**
   * Whether words still being recognised (an interim transcript) could yet turn out a backchannel:
   * they are one already, or their last phrase is the start of one ("I" of "I see", "got" of "got it").
   */
  mayBecomeBackchannel(text: string): boolean {
    const w = words(text);
    if (w.length === 0 || w.length >= this.minWords) return false;
    return this.covers(w, 0, true);
  }

  /** Whether lexicon phrases cover the words from `at` to the end (`open`: the last phrase may be cut short). */
  private covers(w: string[], at: number, open = false): boolean {
    if (at === w.length) return true;
    return this.phrases.some((p) => {
      const n = Math.min(p.length, w.length - at);
      if (n < p.length && !open) return false;
      return p.slice(0, n).every((word, i) => w[at + i] === word) && this.covers(w, at + n, open);
    });
  }
}
