import type { Db } from '../db/index.js';
import type { App } from '../http/index.js';
import { registerKnowledgeRoutes } from './routes.js';
import { KnowledgeService } from './service.js';

export { KnowledgeService } from './service.js';
export { chunkText } from './chunk.js';
export type { ChunkHit } from './repository.js';

/** The knowledge feature's only door: its API, and the search a call's agent runs. */
export function registerKnowledge(app: App, db: Db): void {
  registerKnowledgeRoutes(app, new KnowledgeService(db));
}
