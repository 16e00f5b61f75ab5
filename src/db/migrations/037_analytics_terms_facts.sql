-- Payload terms that carry the facts of their lead again, kept up off the lifecycle's statements
-- (docs/analytics.md, "Payload filters").
--
-- Migration 035 read each matching lead's facts through a probe of leads_facts_idx: about 1.7 us a
-- probe at best, so a filter matching 67,000 of a million leads took 200 to 300 ms. Now each term
-- row holds the facts again, compactly (the lead's reseller, merchant and template as one small
-- owner number), and a filter reads exactly its rows from one covering index. To keep claims and
-- finishes light, they do not rewrite terms: a statement trigger appends the numbers of the leads
-- whose facts changed to lead_terms_pending (a heap append, no index), and the analytics folder
-- rewrites those leads' terms in the background, in batches. A reader takes the facts from the
-- terms of the leads not pending and from the lead itself for the pending ones, in one snapshot,
-- so every answer stays exact whatever the fold's lag.

-- Every (reseller, merchant, template) a live lead with terms has had; merchant '' for none.
CREATE TABLE lead_owners (
  owner_no integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  reseller_id text NOT NULL,
  merchant_id text NOT NULL,
  template_id text NOT NULL,
  UNIQUE (reseller_id, merchant_id, template_id)
);

-- Leads whose facts changed after their terms were written; one row per lead and statement.
CREATE TABLE lead_terms_pending (
  lead_no bigint NOT NULL
);

ALTER TABLE lead_payload_terms
  ADD COLUMN owner_no integer,
  ADD COLUMN activity_at timestamptz,
  ADD COLUMN attempt_count integer,
  ADD COLUMN duration_seconds integer,
  ADD COLUMN sentiment real,
  ADD COLUMN status text,
  ADD COLUMN outcome text,
  ADD COLUMN provider text;

-- The full rows of one lead's stored terms, its facts as they are now. Its owner must already be in
-- lead_owners (the triggers and the folder add it first); owner_no is NULL otherwise. A single
-- SELECT, so PostgreSQL inlines it where it is used as `CROSS JOIN LATERAL lead_term_rows(n)`.
CREATE FUNCTION lead_term_rows(n leads) RETURNS SETOF lead_payload_terms LANGUAGE sql STABLE AS $$
  SELECT t.key, t.value, t.lead_no,
         (SELECT o.owner_no FROM lead_owners o
          WHERE o.reseller_id = n.reseller_id AND o.merchant_id = coalesce(n.merchant_id, '') AND o.template_id = n.template_id),
         coalesce(n.call_initiated_time, n.created_at), n.attempt_count, n.duration_seconds, n.sentiment, n.status, n.outcome, n.provider
  FROM lead_terms(n) AS t
$$;

CREATE OR REPLACE FUNCTION lead_terms_on_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  -- The owners not seen yet. Looks before it inserts, so the identity's sequence is only drawn for a new one.
  INSERT INTO lead_owners (reseller_id, merchant_id, template_id)
  SELECT DISTINCT n.reseller_id, coalesce(n.merchant_id, ''), n.template_id
  FROM new_rows n
  WHERE NOT n.is_playground AND n.execution_mode NOT IN ('TELEPHONY_TEST', 'WEBRTC_TEST')
    AND NOT EXISTS (SELECT 1 FROM lead_owners o
                    WHERE o.reseller_id = n.reseller_id AND o.merchant_id = coalesce(n.merchant_id, '') AND o.template_id = n.template_id)
  ON CONFLICT DO NOTHING;
  INSERT INTO lead_payload_terms SELECT t.* FROM new_rows n CROSS JOIN LATERAL lead_term_rows(n) AS t;
  RETURN NULL;
END
$$;

-- One lead whose payload or liveness changed: its terms are replaced with its facts as they are now.
CREATE OR REPLACE FUNCTION lead_terms_on_update() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  term record;
BEGIN
  FOR term IN SELECT * FROM lead_terms(OLD) LOOP
    DELETE FROM lead_payload_terms x WHERE x.key = term.key AND x.value = term.value AND x.lead_no = term.lead_no;
  END LOOP;
  INSERT INTO lead_owners (reseller_id, merchant_id, template_id)
  SELECT NEW.reseller_id, coalesce(NEW.merchant_id, ''), NEW.template_id
  WHERE NOT NEW.is_playground AND NEW.execution_mode NOT IN ('TELEPHONY_TEST', 'WEBRTC_TEST')
    AND NOT EXISTS (SELECT 1 FROM lead_owners o
                    WHERE o.reseller_id = NEW.reseller_id AND o.merchant_id = coalesce(NEW.merchant_id, '') AND o.template_id = NEW.template_id)
  ON CONFLICT DO NOTHING;
  INSERT INTO lead_payload_terms SELECT * FROM lead_term_rows(NEW);
  RETURN NULL;
END
$$;

-- Any update that changes a fact the terms hold of a live lead with an object payload: the lead is
-- pending until the folder rewrites its terms. Lease renewals, call IDs, metadata and next_attempt_at
-- change no fact and append nothing.
CREATE FUNCTION lead_terms_pending_on_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO lead_terms_pending (lead_no)
  SELECT n.lead_no FROM new_rows n JOIN old_rows o ON o.lead_no = n.lead_no
  WHERE NOT n.is_playground AND n.execution_mode NOT IN ('TELEPHONY_TEST', 'WEBRTC_TEST') AND jsonb_typeof(n.payload) = 'object'
    AND (n.reseller_id, n.merchant_id, n.template_id, coalesce(n.call_initiated_time, n.created_at), n.attempt_count,
         n.duration_seconds, n.sentiment, n.status, n.outcome, n.provider)
        IS DISTINCT FROM
        (o.reseller_id, o.merchant_id, o.template_id, coalesce(o.call_initiated_time, o.created_at), o.attempt_count,
         o.duration_seconds, o.sentiment, o.status, o.outcome, o.provider);
  RETURN NULL;
END
$$;

CREATE TRIGGER leads_terms_pending AFTER UPDATE ON leads REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION lead_terms_pending_on_update();

-- TRUNCATE leads empties these with the rest of the analytics tables (migration 009).
CREATE OR REPLACE FUNCTION leads_truncated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  TRUNCATE lead_stats, lead_stats_delta, lead_stats_breakdown, lead_stats_breakdown_daily, lead_stats_breakdown_delta,
           lead_payload_terms, lead_terms_pending;
  RETURN NULL;
END
$$;

-- The terms already there, rewritten with their facts, then the covering index. Replacing the
-- triggers above locked leads against writers until this migration commits.
INSERT INTO lead_owners (reseller_id, merchant_id, template_id)
SELECT DISTINCT l.reseller_id, coalesce(l.merchant_id, ''), l.template_id FROM leads l
WHERE NOT l.is_playground AND l.execution_mode NOT IN ('TELEPHONY_TEST', 'WEBRTC_TEST');
DROP INDEX lead_payload_terms_idx;
TRUNCATE lead_payload_terms;
INSERT INTO lead_payload_terms SELECT t.* FROM leads l CROSS JOIN LATERAL lead_term_rows(l) AS t;

-- A payload filter reads its rows, facts included, from this index alone.
CREATE INDEX lead_payload_terms_idx ON lead_payload_terms (key, value, lead_no)
  INCLUDE (owner_no, activity_at, attempt_count, duration_seconds, sentiment, status, outcome, provider);
