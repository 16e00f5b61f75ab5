/** The knowledge base's documents and search, typed by the server's schemas. */
import { http } from './client.js';
import type { Paged } from './types.js';
import type { Chunk as ChunkT, DocumentBody as DocumentBodyT, KnowledgeDocument as DocumentT, KnowledgeDocumentSummary as SummaryT } from '../../../src/knowledge/schema.js';

export type KnowledgeDocument = DocumentT;
export type KnowledgeDocumentSummary = SummaryT;
export type KnowledgeChunk = ChunkT;

const at = (id: string) => `/knowledge/documents/${encodeURIComponent(id)}`;

export const knowledge = {
  list: (signal?: AbortSignal) => http.get<Paged<KnowledgeDocumentSummary>>('/knowledge/documents', { page_size: 1000 }, signal),
  create: (body: DocumentBodyT) => http.post<KnowledgeDocument>('/knowledge/documents', body),
  remove: (id: string) => http.delete<{ id: string; deleted: true }>(at(id)),
  search: (q: string, template_id?: string) => http.get<{ data: KnowledgeChunk[] }>('/knowledge/search', { q, ...(template_id ? { template_id } : {}) }),
};
