/**
 * How a question is searched, decided from how many chunks hold each of its words, so that the
 * search reads a few short posting lists of the index and ranks a few hundred chunks at most,
 * whatever the size of the knowledge base.
 *
 * Terminology:
 * - term: one of the question's English lexemes (stemmed, stop words dropped), e.g. `warranti`.
 * - chunks holding a term (its document frequency): counted per reseller as chunks are written.
 * - weight: what holding a term adds to a chunk's rank, its inverse document frequency as BM25
 *   has it, ln((chunks - holding + 0.5) / (holding + 0.5)): a rare word counts for much, and a word
 *   that half the chunks or more hold for nothing (it only orders chunks that tie otherwise).
 * - candidates: the chunks fetched through the index and ranked; the others are never read.
 */

/** At most this many chunks are fetched by the question's rarer words and ranked. */
export const CANDIDATE_BUDGET = 100;
/** A question of common words fetches the chunks holding its rarest few words, at most this many. */
const REQUIRED_TERMS = 3;
/** A long question is searched by its rarest words, at most this many (each costs every candidate a check). */
const MAX_TERMS = 16;

export interface TermCount {
  lexeme: string;
  /** How many chunks in scope hold it. */
  chunks: number;
}

export interface SearchPlan {
  /**
   * The candidates: chunks holding any of `terms`, the rarest terms while the chunks holding them
   * number no more than the budget between them; or, when even the rarest term is held by more,
   * chunks holding all of the (rarest three) terms that weigh something, the best answers to a
   * question of common words. At most `fetchLimit` of them.
   */
  fetch: { terms: string[]; all: boolean };
  /**
   * When the candidates are fewer than the answer asks for: chunks holding any of these terms (the
   * rest of the question's, or its rarest when all of them were required) and not fetched above.
   */
  fill: string[];
  fetchLimit: number;
  /** Every term some chunk holds, rarest first. */
  held: string[];
  /** The terms of `held` that weigh something, with their weights. */
  weights: Array<{ lexeme: string; weight: number }>;
}

/**
 * `terms`: the question's terms with the chunks holding each (0: none); `totalChunks`: the chunks
 * in scope. Undefined when no chunk holds any of the terms (nothing to fetch).
 */
export function planSearch(terms: readonly TermCount[], totalChunks: number, budget = CANDIDATE_BUDGET): SearchPlan | undefined {
  const held = terms
    .filter((t) => t.chunks > 0)
    .sort((a, b) => a.chunks - b.chunks || (a.lexeme < b.lexeme ? -1 : 1))
    .slice(0, MAX_TERMS);
  if (held.length === 0) return undefined;
  const lexemes = held.map((t) => t.lexeme);
  const total = Math.max(totalChunks, held[held.length - 1]!.chunks);
  let rare = 0;
  for (let fetched = 0; rare < held.length && fetched + held[rare]!.chunks <= budget; rare++) fetched += held[rare]!.chunks;
  const weights = held.map((t) => ({ lexeme: t.lexeme, weight: Math.log((total - t.chunks + 0.5) / (t.chunks + 0.5)) })).filter((w) => w.weight > 0);
  // The rarest few of the terms that weigh something: requiring a word that most chunks hold as
  // well narrows the candidates little and costs the index its longest posting lists.
  const required = (weights.length > 1 ? weights.map((w) => w.lexeme) : lexemes).slice(0, REQUIRED_TERMS);
  const all = rare === 0 && required.length > 1;
  return {
    fetch: all ? { terms: required, all } : { terms: lexemes.slice(0, Math.max(rare, 1)), all },
    fill: all ? lexemes.slice(0, 1) : lexemes.slice(Math.max(rare, 1)),
    fetchLimit: budget,
    held: lexemes,
    weights,
  };
}

/** A lexeme as a one-term text search query (quoted: a lexeme may hold punctuation). */
export function lexemeQuery(lexeme: string): string {
  return `'${lexeme.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`;
}

/** Text search query: any of the lexemes (`all`: every one). */
export function termsQuery(lexemes: readonly string[], all = false): string {
  return lexemes.map(lexemeQuery).join(all ? ' & ' : ' | ');
}
