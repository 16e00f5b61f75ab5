-- The knowledge base (docs/knowledge.md): a reseller's documents, optionally for one template, cut
-- into chunks of a few hundred words that the agent's `search_knowledge` function finds by
-- full-text search (the same on PGlite and PostgreSQL).
CREATE TABLE knowledge_documents (
  id text PRIMARY KEY,
  reseller_id text NOT NULL REFERENCES resellers (id) ON DELETE CASCADE,
  template_id text REFERENCES templates (id) ON DELETE CASCADE,
  title text NOT NULL,
  format text NOT NULL,
  content text NOT NULL,
  chunk_count integer NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX knowledge_documents_reseller ON knowledge_documents (reseller_id, created_at, id);

-- A chunk carries its document's owner so a search filters and ranks in one index scan, no join
-- before the match. `search`: the chunk's words (and its document's title) as English lexemes.
CREATE TABLE knowledge_chunks (
  document_id text NOT NULL REFERENCES knowledge_documents (id) ON DELETE CASCADE,
  position integer NOT NULL,
  reseller_id text NOT NULL,
  template_id text,
  content text NOT NULL,
  search tsvector NOT NULL,
  PRIMARY KEY (document_id, position)
);
CREATE INDEX knowledge_chunks_search ON knowledge_chunks USING gin (search);
CREATE INDEX knowledge_chunks_reseller ON knowledge_chunks (reseller_id);
