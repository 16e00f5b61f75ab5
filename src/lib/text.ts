/**
 * Text PostgreSQL cannot hold: a NUL character (text and jsonb have none) or a lone UTF-16
 * surrogate (not Unicode; `"x\ud800y"` in JSON). Requests carrying it are refused (http/text.ts);
 * records Dialer makes of such requests (the audit trail) store a replacement instead.
 */
const NUL = /\u0000/;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Why `text` cannot be stored, or undefined when it can. */
export function unstorableTextFlaw(text: string): string | undefined {
  if (NUL.test(text)) return 'contains a NUL character (\\u0000), which cannot be stored';
  if (LONE_SURROGATE.test(text)) return 'contains a lone UTF-16 surrogate (not valid Unicode), which cannot be stored';
  return undefined;
}

/** `text` with every NUL and lone surrogate replaced by U+FFFD, so that it can be stored. */
export function storableText(text: string): string {
  return text.replace(new RegExp(NUL.source, 'g'), '\uFFFD').replace(new RegExp(LONE_SURROGATE.source, 'g'), '\uFFFD');
}
