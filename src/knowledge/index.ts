import type { Db } from '../db/index.js';
import type { App } from '../http/index.js';
import type { OutboundFetch } from '../lib/outbound/index.js';
import { registerKnowledgeRoutes } from './routes.js';
import { KnowledgeService } from './service.js';

export { KnowledgeService } from './service.js';
export { chunkText } from './chunk.js';
export type { ChunkHit } from './repository.js';

/** The knowledge feature's only door: its API (web pages read through `fetch`, the outbound policy's), and the search a call's agent runs. */
export function registerKnowledge(app: App, db: Db, fetch: OutboundFetch): void {
  registerKnowledgeRoutes(app, new KnowledgeService(db, { fetch }));
}
