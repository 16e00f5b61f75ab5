-- Payload filters answered without reading the leads (docs/analytics.md, "Payload filters").
--
-- A payload filter {"k": v} (v a string, number, boolean or null) matches a lead exactly when its
-- payload is an object whose key k holds a scalar jsonb-equal to v (containment does not look into
-- nested arrays or objects for a scalar). So one row per live lead and top-level scalar payload
-- key, carrying the lead's analytics facts, answers any payload filter: a one-key filter is an
-- index-only scan of exactly the matching leads, in the order (key, value, reseller, activity
-- time); more keys are the same rows that also have a row for each other key (found by the full
-- index key, lead_id included).
--
-- Kept exact by three statement-level triggers on leads (like the rollup's of migration 006: every
-- write path, one statement per event, transition tables): an insert adds the terms of the new live
-- leads; an update that changes a lead's facts, liveness or payload deletes its old terms (each by
-- its full index key: no other index needed) and adds the new ones; a delete removes them. An
-- update touching nothing analytics read (lease renewals, call IDs, metadata) stops at a check.
--
-- Stored terms (written identically in src/analytics/terms/eligibility.ts, which sends filters on
-- anything else to the leads): key of at most 128 bytes; value a string of at most 256 bytes, a
-- boolean, null, or a number whose canonical text (trailing zeros trimmed; every JavaScript number
-- fits) has at most 400 characters. Numbers are stored with trailing zeros trimmed: jsonb equality
-- is numeric (1.0 = 1), so lookups are unchanged and the index row stays small.

CREATE TABLE lead_payload_terms (
  key text NOT NULL,
  value jsonb NOT NULL,
  reseller_id text NOT NULL,
  -- coalesce(call_initiated_time, created_at) of the lead: its activity time.
  activity_at timestamptz NOT NULL,
  lead_id text NOT NULL,
  merchant_id text,
  template_id text NOT NULL,
  status text NOT NULL,
  outcome text,
  attempt_count integer NOT NULL,
  duration_seconds integer,
  sentiment real,
  provider text
);

DO $migration$
DECLARE
  -- The terms of the leads in `%s` (a transition table, alias n): live leads, stored keys only.
  terms_of constant text := $body$
    SELECT e.key AS key,
           CASE WHEN jsonb_typeof(e.value) = 'number' THEN to_jsonb(trim_scale(e.value::numeric)) ELSE e.value END AS value,
           n.reseller_id, coalesce(n.call_initiated_time, n.created_at) AS activity_at, n.id AS lead_id, n.merchant_id, n.template_id,
           n.status, n.outcome, n.attempt_count, n.duration_seconds, n.sentiment, n.provider
    FROM %s n
    CROSS JOIN LATERAL jsonb_each(CASE WHEN jsonb_typeof(n.payload) = 'object' THEN n.payload END) AS e
    WHERE NOT n.is_playground AND n.execution_mode NOT IN ('TELEPHONY_TEST', 'WEBRTC_TEST')
      AND octet_length(e.key) <= 128
      AND CASE jsonb_typeof(e.value)
            WHEN 'string' THEN octet_length(e.value #>> '{}') <= 256
            WHEN 'number' THEN length(trim_scale(e.value::numeric)::text) <= 400
            WHEN 'boolean' THEN true
            WHEN 'null' THEN true
            ELSE false
          END
  $body$;
  insert_terms constant text := 'INSERT INTO lead_payload_terms (key, value, reseller_id, activity_at, lead_id, merchant_id, template_id, '
                                'status, outcome, attempt_count, duration_seconds, sentiment, provider) ' || terms_of;
  -- Removes the terms of the leads in `%s`, each row by its full index key, one statement per row:
  -- a set-based DELETE ... USING is planned from guessed sizes of the transition table and of the
  -- values' frequencies, and was seen to scan every row of a (key, value) (700,000 for a common
  -- language) per lead. One exact index probe per term row costs the same at any statement size.
  delete_terms constant text := $body$
    FOR term IN %s LOOP
      DELETE FROM lead_payload_terms t
      WHERE t.key = term.key AND t.value = term.value AND t.reseller_id = term.reseller_id
        AND t.activity_at = term.activity_at AND t.lead_id = term.lead_id;
    END LOOP
  $body$;
  -- Everything a term row holds; a lead whose tuple of these is unchanged keeps its terms.
  facts constant text :=
    '(%1$s.id, %1$s.reseller_id, %1$s.merchant_id, %1$s.template_id, %1$s.call_initiated_time, %1$s.created_at, %1$s.status, '
    '%1$s.outcome, %1$s.attempt_count, %1$s.duration_seconds, %1$s.sentiment, %1$s.provider, %1$s.is_playground, %1$s.execution_mode, %1$s.payload)';
  old_changed text;
  new_changed text;
BEGIN
  old_changed := format('(SELECT o.* FROM old_rows o WHERE NOT EXISTS (SELECT 1 FROM new_rows n WHERE n.id = o.id AND %s IS NOT DISTINCT FROM %s))',
                        format(facts, 'n'), format(facts, 'o'));
  new_changed := format('(SELECT n.* FROM new_rows n WHERE NOT EXISTS (SELECT 1 FROM old_rows o WHERE o.id = n.id AND %s IS NOT DISTINCT FROM %s))',
                        format(facts, 'n'), format(facts, 'o'));
  EXECUTE format('CREATE FUNCTION lead_terms_on_insert() RETURNS trigger LANGUAGE plpgsql AS %L',
    format('BEGIN %s; RETURN NULL; END', format(insert_terms, 'new_rows')));
  EXECUTE format('CREATE FUNCTION lead_terms_on_delete() RETURNS trigger LANGUAGE plpgsql AS %L',
    format('DECLARE term record; BEGIN %s; RETURN NULL; END', format(delete_terms, format(terms_of, 'old_rows'))));
  EXECUTE format('CREATE FUNCTION lead_terms_on_update() RETURNS trigger LANGUAGE plpgsql AS %L',
    format('DECLARE term record;
            BEGIN
              IF NOT EXISTS (SELECT 1 FROM new_rows n FULL JOIN old_rows o ON o.id = n.id
                             WHERE o.id IS NULL OR n.id IS NULL OR %s IS DISTINCT FROM %s) THEN
                RETURN NULL;
              END IF;
              %s;
              %s;
              RETURN NULL;
            END',
      format(facts, 'n'), format(facts, 'o'),
      format(delete_terms, format(terms_of, old_changed)),
      format(insert_terms, new_changed)));
END
$migration$;

CREATE TRIGGER leads_terms_insert AFTER INSERT ON leads REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION lead_terms_on_insert();
CREATE TRIGGER leads_terms_update AFTER UPDATE ON leads REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION lead_terms_on_update();
CREATE TRIGGER leads_terms_delete AFTER DELETE ON leads REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION lead_terms_on_delete();

-- The leads already there. Creating the triggers above locked leads against writers until this
-- migration commits, so no change is missed or counted twice. The index is built after the rows.
INSERT INTO lead_payload_terms (key, value, reseller_id, activity_at, lead_id, merchant_id, template_id, status, outcome,
                                attempt_count, duration_seconds, sentiment, provider)
SELECT e.key,
       CASE WHEN jsonb_typeof(e.value) = 'number' THEN to_jsonb(trim_scale(e.value::numeric)) ELSE e.value END,
       n.reseller_id, coalesce(n.call_initiated_time, n.created_at), n.id, n.merchant_id, n.template_id, n.status,
       n.outcome, n.attempt_count, n.duration_seconds, n.sentiment, n.provider
FROM leads n
CROSS JOIN LATERAL jsonb_each(CASE WHEN jsonb_typeof(n.payload) = 'object' THEN n.payload END) AS e
WHERE NOT n.is_playground AND n.execution_mode NOT IN ('TELEPHONY_TEST', 'WEBRTC_TEST')
  AND octet_length(e.key) <= 128
  AND CASE jsonb_typeof(e.value)
        WHEN 'string' THEN octet_length(e.value #>> '{}') <= 256
        WHEN 'number' THEN length(trim_scale(e.value::numeric)::text) <= 400
        WHEN 'boolean' THEN true
        WHEN 'null' THEN true
        ELSE false
      END;

-- Every query over the terms reads these columns only: index-only scans.
CREATE INDEX lead_payload_terms_idx ON lead_payload_terms (key, value, reseller_id, activity_at, lead_id)
  INCLUDE (merchant_id, template_id, status, outcome, attempt_count, duration_seconds, sentiment, provider);
