/**
 * The knowledge base's embeddings endpoint (docs/knowledge.md, "Embeddings"): any OpenAI-compatible
 * `POST /embeddings`. Unset: knowledge search is full-text alone.
 */
import { httpUrl, text, type Env } from './env.js';

export interface EmbeddingsSettings {
  /** Base URL; requests go to `${url}/embeddings`. */
  url: string;
  model: string;
  apiKey: string | undefined;
}

export interface KnowledgeSettings {
  /** Undefined: no embeddings, full-text search alone. */
  embeddings: EmbeddingsSettings | undefined;
}

export function knowledgeSettings(env: Env): KnowledgeSettings {
  const raw = text(env, 'DIALER_EMBEDDINGS_URL');
  if (!raw) return { embeddings: undefined };
  return {
    embeddings: {
      url: httpUrl('DIALER_EMBEDDINGS_URL', raw),
      model: text(env, 'DIALER_EMBEDDINGS_MODEL') ?? 'text-embedding-3-small',
      apiKey: text(env, 'DIALER_EMBEDDINGS_API_KEY') ?? text(env, 'OPENAI_API_KEY'),
    },
  };
}
