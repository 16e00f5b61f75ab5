import type { KnowledgeSettings } from '../config.js';
import type { Db } from '../db/index.js';
import type { App } from '../http/index.js';
import type { Logger } from '../lib/logger.js';
import type { OutboundFetch } from '../lib/outbound/index.js';
import { OpenAIEmbeddings } from './embeddings.js';
import { registerKnowledgeRoutes } from './routes.js';
import { KnowledgeService } from './service.js';

export { KnowledgeService, fuseRanks } from './service.js';
export { OpenAIEmbeddings, EmbeddingsError, type Embedder } from './embeddings.js';
export { chunkText } from './chunk.js';
export type { ChunkHit } from './repository.js';

/**
 * The knowledge base of this process: web pages and the embeddings endpoint are reached through
 * `fetch`, the outbound policy's; chunks are embedded when an endpoint is configured.
 */
export function createKnowledgeService(db: Db, deps: { fetch: OutboundFetch; settings: KnowledgeSettings; log: Pick<Logger, 'warn'> }): KnowledgeService {
  const embedder = deps.settings.embeddings ? new OpenAIEmbeddings(deps.settings.embeddings, deps.fetch) : undefined;
  return new KnowledgeService(db, { fetch: deps.fetch, log: deps.log, ...(embedder ? { embedder } : {}) });
}

/** The knowledge feature's only door: its API, and (KnowledgeService.searchForTemplate) the search a call's agent runs. */
export function registerKnowledge(app: App, knowledge: KnowledgeService): void {
  registerKnowledgeRoutes(app, knowledge);
}
