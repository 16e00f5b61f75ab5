-- Embeddings of knowledge chunks (docs/knowledge.md, "Embeddings"). A chunk's vector is kept as a
-- plain real[] with the model that made it, so the table is the same with or without pgvector;
-- search compares the vectors as pgvector's `vector` where the extension is present, and only
-- vectors of the configured model.
ALTER TABLE knowledge_chunks ADD COLUMN embedding real[], ADD COLUMN embedding_model text;

-- pgvector, where this server has it (PostgreSQL with the extension installed; embedded PGlite
-- loads it) and this role may create it. Without it, search stays full-text.
DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'vector') THEN
    CREATE EXTENSION IF NOT EXISTS vector;
  END IF;
EXCEPTION WHEN insufficient_privilege THEN
  RAISE NOTICE 'pgvector is installed but this role may not create the extension: knowledge search stays full-text until CREATE EXTENSION vector is run';
END
$$;
