-- Payload terms that change only with the payload (docs/analytics.md, "Payload filters").
--
-- Migration 007's terms carried each lead's analytics facts (status, outcome, attempts, duration,
-- sentiment, provider, activity time) in every row, one row per payload key: every claim and every
-- finish rewrote all of a lead's rows (a delete and an insert per key, in a covering index), which
-- doubled what PostgreSQL spends per dispatched lead, and the table was 2.5 times the size of the
-- leads. Now a term row holds what does not change when a lead is dialled: (key, value, lead_no).
-- The facts are read from the lead itself, through a narrow covering index on its number
-- (leads_facts_idx, partial on live leads like the indexes of migration 002): a payload filter is
-- an index-only scan of the matching terms joined, lead by lead, to index-only probes of
-- leads_facts_idx. Claims and finishes do not touch the terms at all; the update trigger fires only
-- for statements that set the payload or the liveness of a lead.
--
-- lead_no: a number of the lead's own (an identity), eight bytes to store and compare in every
-- term row and probe instead of the 36-character id.

ALTER TABLE leads ADD COLUMN lead_no bigint GENERATED ALWAYS AS IDENTITY;

-- Every column a query over the terms reads of the lead, keyed by its number.
CREATE UNIQUE INDEX leads_facts_idx ON leads (lead_no)
  INCLUDE (reseller_id, merchant_id, template_id, call_initiated_time, created_at, status, outcome, attempt_count, duration_seconds, sentiment, provider)
  WHERE NOT is_playground AND execution_mode NOT IN ('TELEPHONY_TEST', 'WEBRTC_TEST');

DROP TRIGGER leads_terms_insert ON leads;
DROP TRIGGER leads_terms_update ON leads;
DROP TRIGGER leads_terms_delete ON leads;
DROP FUNCTION lead_terms_on_insert();
DROP FUNCTION lead_terms_on_update();
DROP FUNCTION lead_terms_on_delete();
DROP TABLE lead_payload_terms;

CREATE TABLE lead_payload_terms (
  key text NOT NULL,
  value jsonb NOT NULL,
  lead_no bigint NOT NULL
);

-- The stored terms of one lead: none unless it is live; the keys and values of migration 007's rule
-- (written identically in src/analytics/terms/source.ts); numbers with trailing zeros trimmed
-- (jsonb equality is numeric, so lookups are unchanged and the row stays small). A single SELECT,
-- so PostgreSQL inlines it where it is used as `CROSS JOIN LATERAL lead_terms(n)`.
CREATE FUNCTION lead_terms(n leads) RETURNS TABLE (key text, value jsonb, lead_no bigint)
LANGUAGE sql IMMUTABLE AS $$
  SELECT e.key,
         CASE WHEN jsonb_typeof(e.value) = 'number' THEN to_jsonb(trim_scale(e.value::numeric)) ELSE e.value END,
         n.lead_no
  FROM jsonb_each(CASE WHEN jsonb_typeof(n.payload) = 'object' THEN n.payload END) AS e
  WHERE NOT n.is_playground AND n.execution_mode NOT IN ('TELEPHONY_TEST', 'WEBRTC_TEST')
    AND octet_length(e.key) <= 128
    AND CASE jsonb_typeof(e.value)
          WHEN 'string' THEN octet_length(e.value #>> '{}') <= 256
          WHEN 'number' THEN length(trim_scale(e.value::numeric)::text) <= 400
          WHEN 'boolean' THEN true
          WHEN 'null' THEN true
          ELSE false
        END
$$;

CREATE FUNCTION lead_terms_on_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO lead_payload_terms (key, value, lead_no) SELECT t.* FROM new_rows n CROSS JOIN LATERAL lead_terms(n) AS t;
  RETURN NULL;
END
$$;

-- Terms are removed one row at a time by the full index key: a set-based DELETE ... USING was
-- planned from guessed sizes and scanned every row of a common (key, value) per lead (migration 007).
CREATE FUNCTION lead_terms_on_delete() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  term record;
BEGIN
  FOR term IN SELECT t.* FROM old_rows o CROSS JOIN LATERAL lead_terms(o) AS t LOOP
    DELETE FROM lead_payload_terms x WHERE x.key = term.key AND x.value = term.value AND x.lead_no = term.lead_no;
  END LOOP;
  RETURN NULL;
END
$$;

-- One lead whose payload or liveness changed (the trigger's WHEN clause has checked it).
CREATE FUNCTION lead_terms_on_update() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  term record;
BEGIN
  FOR term IN SELECT * FROM lead_terms(OLD) LOOP
    DELETE FROM lead_payload_terms x WHERE x.key = term.key AND x.value = term.value AND x.lead_no = term.lead_no;
  END LOOP;
  INSERT INTO lead_payload_terms (key, value, lead_no) SELECT * FROM lead_terms(NEW);
  RETURN NULL;
END
$$;

CREATE TRIGGER leads_terms_insert AFTER INSERT ON leads REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION lead_terms_on_insert();
CREATE TRIGGER leads_terms_delete AFTER DELETE ON leads REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION lead_terms_on_delete();
-- A row trigger on these columns only: a statement that does not set them (claims, finishes,
-- lease renewals) does not fire it at all.
CREATE TRIGGER leads_terms_update AFTER UPDATE OF payload, is_playground, execution_mode ON leads
  FOR EACH ROW
  WHEN (OLD.payload IS DISTINCT FROM NEW.payload OR OLD.is_playground IS DISTINCT FROM NEW.is_playground
        OR OLD.execution_mode IS DISTINCT FROM NEW.execution_mode)
  EXECUTE FUNCTION lead_terms_on_update();

-- The leads already there. Creating the triggers above locked leads against writers until this
-- migration commits, so no change is missed or counted twice. The index is built after the rows.
INSERT INTO lead_payload_terms (key, value, lead_no) SELECT t.* FROM leads l CROSS JOIN LATERAL lead_terms(l) AS t;

CREATE INDEX lead_payload_terms_idx ON lead_payload_terms (key, value, lead_no);
