/**
 * Cutting a document into chunks for search: paragraphs (blank-line separated; a Markdown heading
 * starts a new one) are packed together up to about `targetWords`; a paragraph longer than
 * `maxWords` is cut at sentence ends, and a sentence longer still at word boundaries. A chunk is
 * what the agent is handed, so it stays small enough to read aloud from and large enough to answer.
 */
export const CHUNK_TARGET_WORDS = 200;
export const CHUNK_MAX_WORDS = 300;

const words = (text: string) => text.split(/\s+/).filter(Boolean).length;

function paragraphs(text: string): string[] {
  const out: string[] = [];
  let current: string[] = [];
  const flush = () => {
    const p = current.join('\n').trim();
    if (p) out.push(p);
    current = [];
  };
  for (const line of text.replace(/\r\n?/g, '\n').split('\n')) {
    if (!line.trim()) flush();
    else {
      if (/^#{1,6}\s/.test(line)) flush();
      current.push(line.trimEnd());
    }
  }
  flush();
  return out;
}

/** Pieces of a paragraph, none over `maxWords`: sentences first, then plain word runs. */
function pieces(paragraph: string, maxWords: number): string[] {
  if (words(paragraph) <= maxWords) return [paragraph];
  const out: string[] = [];
  let current = '';
  for (const sentence of paragraph.split(/(?<=[.!?])\s+/)) {
    if (words(sentence) > maxWords) {
      if (current) out.push(current), (current = '');
      const w = sentence.split(/\s+/).filter(Boolean);
      for (let i = 0; i < w.length; i += maxWords) out.push(w.slice(i, i + maxWords).join(' '));
    } else if (words(current) + words(sentence) > maxWords) {
      out.push(current);
      current = sentence;
    } else current = current ? `${current} ${sentence}` : sentence;
  }
  if (current) out.push(current);
  return out;
}

export function chunkText(text: string, targetWords = CHUNK_TARGET_WORDS, maxWords = CHUNK_MAX_WORDS): string[] {
  const chunks: string[] = [];
  let current: string[] = [];
  let count = 0;
  for (const piece of paragraphs(text).flatMap((p) => pieces(p, maxWords))) {
    const n = words(piece);
    if (count > 0 && count + n > targetWords) {
      chunks.push(current.join('\n\n'));
      current = [];
      count = 0;
    }
    current.push(piece);
    count += n;
  }
  if (current.length) chunks.push(current.join('\n\n'));
  return chunks;
}
