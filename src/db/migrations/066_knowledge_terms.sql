-- Knowledge search that reads a small part of the index (docs/knowledge.md, "Chunks and search").
--
-- A search used to OR a question's words and rank every chunk holding any of them: one common word
-- and nearly every chunk was ranked. Now it first looks up how many of the reseller's chunks hold
-- each of the question's words (knowledge_terms, kept by the triggers below), fetches candidates
-- by its rarest words only, and ranks those few.

-- How many chunks of a reseller hold each lexeme; lexeme '' (never a lexeme) counts all its chunks.
CREATE TABLE knowledge_terms (
  reseller_id text NOT NULL,
  lexeme text NOT NULL,
  chunks integer NOT NULL,
  PRIMARY KEY (lexeme, reseller_id)
);

-- The counts change with every statement that adds or removes chunks, cascades from a document's,
-- template's or reseller's deletion included (so a reseller's counts go when its chunks do, with no
-- key of their own to cascade). Rows are taken in key order, so two writers of one reseller queue
-- rather than deadlock.
-- `reseller_ids` and `searches`: the chunks added (sign 1) or removed (sign -1), one by one.
CREATE FUNCTION knowledge_terms_counted(reseller_ids text[], searches tsvector[], sign integer) RETURNS void LANGUAGE sql AS $$
  INSERT INTO knowledge_terms AS t (reseller_id, lexeme, chunks)
  SELECT c.reseller_id, l.lexeme, sign * count(*)::int
  FROM unnest(reseller_ids, searches) AS c (reseller_id, search)
  CROSS JOIN LATERAL (SELECT '' AS lexeme UNION ALL SELECT unnest(tsvector_to_array(c.search))) AS l
  GROUP BY l.lexeme, c.reseller_id
  ORDER BY l.lexeme, c.reseller_id
  ON CONFLICT (lexeme, reseller_id) DO UPDATE SET chunks = t.chunks + excluded.chunks
$$;

CREATE FUNCTION knowledge_chunks_added() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM knowledge_terms_counted(array_agg(n.reseller_id), array_agg(n.search), 1) FROM new_chunks n HAVING count(*) > 0;
  RETURN NULL;
END
$$;

CREATE FUNCTION knowledge_chunks_removed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM knowledge_terms_counted(array_agg(o.reseller_id), array_agg(o.search), -1) FROM old_chunks o HAVING count(*) > 0;
  -- The lexemes no chunk holds any more.
  DELETE FROM knowledge_terms t
  USING (SELECT DISTINCT o.reseller_id, l.lexeme FROM old_chunks o CROSS JOIN LATERAL unnest(tsvector_to_array(o.search)) AS l (lexeme)
         UNION SELECT DISTINCT o.reseller_id, '' FROM old_chunks o) AS g
  WHERE t.reseller_id = g.reseller_id AND t.lexeme = g.lexeme AND t.chunks <= 0;
  RETURN NULL;
END
$$;

CREATE TRIGGER knowledge_chunks_added AFTER INSERT ON knowledge_chunks REFERENCING NEW TABLE AS new_chunks
  FOR EACH STATEMENT EXECUTE FUNCTION knowledge_chunks_added();
CREATE TRIGGER knowledge_chunks_removed AFTER DELETE ON knowledge_chunks REFERENCING OLD TABLE AS old_chunks
  FOR EACH STATEMENT EXECUTE FUNCTION knowledge_chunks_removed();

CREATE FUNCTION knowledge_chunks_truncated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  TRUNCATE knowledge_terms;
  RETURN NULL;
END
$$;
CREATE TRIGGER knowledge_chunks_truncated AFTER TRUNCATE ON knowledge_chunks
  FOR EACH STATEMENT EXECUTE FUNCTION knowledge_chunks_truncated();

SELECT knowledge_terms_counted(array_agg(c.reseller_id), array_agg(c.search), 1) FROM knowledge_chunks c HAVING count(*) > 0;

-- A chunk's row holds its words' vector itself (about 2 kB for 200 words), not a pointer to it in
-- the TOAST table: ranking a candidate then reads no second relation. The rows written before are
-- rewritten so (the vector's concatenation with nothing is a new value, stored by the new rule).
ALTER TABLE knowledge_chunks SET (toast_tuple_target = 8160);
UPDATE knowledge_chunks SET search = search || ''::tsvector;

-- New chunks go straight into the index's posting trees rather than a pending list that every
-- search would read through in full until a vacuum merges it (embedded PGlite never vacuums).
ALTER INDEX knowledge_chunks_search SET (fastupdate = off);
SELECT gin_clean_pending_list('knowledge_chunks_search'::regclass);
