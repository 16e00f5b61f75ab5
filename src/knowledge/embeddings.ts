/**
 * An OpenAI-compatible embeddings endpoint (`POST {url}/embeddings`: `{ model, input: string[] }`
 * answered with `{ data: [{ index, embedding }] }`), reached through the outbound URL policy. The
 * knowledge base embeds each chunk when it is written and each question when it is searched.
 */
import type { EmbeddingsSettings } from '../config.js';
import { describeOutboundFailure, readTextLimited, type OutboundFetch } from '../lib/outbound/index.js';

/** Inputs per request (the endpoints take a few thousand; a document's chunks rarely pass this). */
export const EMBED_BATCH = 64;
/** How long one request may take: a question's embedding is on a call's reply path. */
export const EMBED_TIMEOUT_MS = 10_000;
const MAX_RESPONSE_BYTES = 64_000_000;

export class EmbeddingsError extends Error {
  override name = 'EmbeddingsError';
}

export interface Embedder {
  /** The model, stored beside each embedding: only vectors of one model are compared. */
  readonly model: string;
  /** One vector per text, in order. */
  embed(texts: readonly string[], signal?: AbortSignal): Promise<number[][]>;
}

export class OpenAIEmbeddings implements Embedder {
  readonly model: string;
  constructor(
    private readonly settings: EmbeddingsSettings,
    private readonly fetch: OutboundFetch,
  ) {
    this.model = settings.model;
  }

  async embed(texts: readonly string[], signal?: AbortSignal): Promise<number[][]> {
    const out: number[][] = [];
    for (let at = 0; at < texts.length; at += EMBED_BATCH) out.push(...(await this.batch(texts.slice(at, at + EMBED_BATCH), signal)));
    return out;
  }

  private async batch(input: readonly string[], signal?: AbortSignal): Promise<number[][]> {
    const timeout = AbortSignal.timeout(EMBED_TIMEOUT_MS);
    let res: Response;
    try {
      res = await this.fetch(`${this.settings.url}/embeddings`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(this.settings.apiKey ? { authorization: `Bearer ${this.settings.apiKey}` } : {}) },
        body: JSON.stringify({ model: this.settings.model, input, encoding_format: 'float' }),
        signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
      });
    } catch (err) {
      throw new EmbeddingsError(`the embeddings endpoint ${describeOutboundFailure(err, EMBED_TIMEOUT_MS)}`, { cause: err });
    }
    const { text, truncated } = await readTextLimited(res, MAX_RESPONSE_BYTES);
    if (!res.ok) {
      let message = text.slice(0, 200);
      try {
        message = (JSON.parse(text) as { error?: { message?: string } }).error?.message ?? message;
      } catch {
        /* not JSON: its first words */
      }
      throw new EmbeddingsError(`the embeddings endpoint answered HTTP ${res.status}: ${message}`);
    }
    let data: Array<{ index?: number; embedding?: unknown }>;
    try {
      if (truncated) throw new Error('too large');
      data = (JSON.parse(text) as { data: typeof data }).data;
    } catch {
      throw new EmbeddingsError('the embeddings endpoint answered something other than an embeddings list');
    }
    const vectors: number[][] = new Array(input.length);
    data.forEach((d, i) => {
      const index = d.index ?? i;
      if (Array.isArray(d.embedding) && index >= 0 && index < input.length) vectors[index] = d.embedding as number[];
    });
    const dims = vectors[0]?.length ?? 0;
    for (let i = 0; i < input.length; i++) {
      const v = vectors[i];
      if (!v || v.length === 0 || v.length !== dims || !v.every(Number.isFinite)) throw new EmbeddingsError(`the embeddings endpoint gave no usable vector for input ${i}`);
    }
    return vectors;
  }
}
