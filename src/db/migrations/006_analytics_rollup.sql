-- Analytics rollup (see docs/analytics.md, "Rollup"): hourly statistics of the
-- live leads, kept exact by a trigger on leads that covers every write path (push, claim, finish,
-- abort, recovery, demo seed, manual SQL; inserts, updates and deletes).
--
-- Why two layers. Writers never touch the statistics rows: the trigger only APPENDS signed change
-- rows to *_delta tables (no row a second writer could wait for, so no deadlock and no queue on
-- "the current hour" on the dialling path). A folder (src/analytics/rollup/fold.ts) moves the
-- deltas into lead_stats / lead_stats_breakdown in one statement, one folder at a time. A reader
-- sums rollup + delta rows in one statement (one snapshot): every committed change is in exactly
-- one of the two, so counts and sums are exact at any moment.
--
-- Minimum and maximum durations cannot be un-merged when a lead leaves a bucket: a delta keeps the
-- smallest and largest duration it removed; the folder recomputes a bucket's min/max from the
-- leads (one hour of one reseller, through leads_analytics_idx) when a removed value was an
-- extreme, and a reader that meets such an unfolded removal answers from the leads instead.
--
-- Keys: reseller, merchant ('' for reseller-level leads, so the key has no NULL), template, the
-- UTC hour of the activity time coalesce(call_initiated_time, created_at), and the status (or, in
-- the breakdown, one of outcome / attempts / provider and its value).

CREATE TABLE lead_stats (
  reseller_id text NOT NULL,
  merchant_id text NOT NULL,
  template_id text NOT NULL,
  hour timestamptz NOT NULL,
  status text NOT NULL,
  leads integer NOT NULL,
  -- attempt_count >= 1; and duration > 0; and finished with a conversation outcome (the funnel).
  dialled integer NOT NULL,
  connected integer NOT NULL,
  completed integer NOT NULL,
  with_duration integer NOT NULL,
  duration_sum bigint NOT NULL,
  duration_min integer,
  duration_max integer,
  -- sentiment < 0.4, 0.4..0.6, > 0.6 (as real, like the queries).
  negative integer NOT NULL,
  neutral integer NOT NULL,
  positive integer NOT NULL,
  PRIMARY KEY (reseller_id, hour, merchant_id, template_id, status)
);

-- Signed changes not yet folded. duration_min/max: of the durations added; removed_min/max: of those removed.
CREATE TABLE lead_stats_delta (
  reseller_id text NOT NULL,
  merchant_id text NOT NULL,
  template_id text NOT NULL,
  hour timestamptz NOT NULL,
  status text NOT NULL,
  leads integer NOT NULL,
  dialled integer NOT NULL,
  connected integer NOT NULL,
  completed integer NOT NULL,
  with_duration integer NOT NULL,
  duration_sum bigint NOT NULL,
  duration_min integer,
  duration_max integer,
  removed_min integer,
  removed_max integer,
  negative integer NOT NULL,
  neutral integer NOT NULL,
  positive integer NOT NULL
);
CREATE INDEX lead_stats_delta_idx ON lead_stats_delta (reseller_id, hour);

-- One row per (bucket, dimension, value): outcome (leads with an outcome), attempts (FINISHED
-- leads dialled at least once, by attempt_count) and provider (leads with a provider).
CREATE TABLE lead_stats_breakdown (
  reseller_id text NOT NULL,
  merchant_id text NOT NULL,
  template_id text NOT NULL,
  hour timestamptz NOT NULL,
  dimension text NOT NULL CHECK (dimension IN ('outcome', 'attempts', 'provider')),
  value text NOT NULL,
  leads integer NOT NULL,
  reached integer NOT NULL,
  with_duration integer NOT NULL,
  duration_sum bigint NOT NULL,
  PRIMARY KEY (reseller_id, dimension, hour, merchant_id, template_id, value)
);

-- The same per UTC day, kept by the folder beside the hourly rows: breakdowns over long ranges read
-- whole days here and only the hours at the ends of the range in lead_stats_breakdown.
CREATE TABLE lead_stats_breakdown_daily (
  reseller_id text NOT NULL,
  merchant_id text NOT NULL,
  template_id text NOT NULL,
  day timestamptz NOT NULL,
  dimension text NOT NULL CHECK (dimension IN ('outcome', 'attempts', 'provider')),
  value text NOT NULL,
  leads integer NOT NULL,
  reached integer NOT NULL,
  with_duration integer NOT NULL,
  duration_sum bigint NOT NULL,
  PRIMARY KEY (reseller_id, dimension, day, merchant_id, template_id, value)
);

CREATE TABLE lead_stats_breakdown_delta (
  reseller_id text NOT NULL,
  merchant_id text NOT NULL,
  template_id text NOT NULL,
  hour timestamptz NOT NULL,
  dimension text NOT NULL,
  value text NOT NULL,
  leads integer NOT NULL,
  reached integer NOT NULL,
  with_duration integer NOT NULL,
  duration_sum bigint NOT NULL
);
CREATE INDEX lead_stats_breakdown_delta_idx ON lead_stats_breakdown_delta (reseller_id, dimension, hour);

-- The statement-level triggers: one INSERT of aggregated delta rows per statement on leads, however
-- many leads it changed. `changed` holds the changed rows with sign +1 (new) / -1 (old); rows whose
-- analytics facts are the same before and after cancel out. The statement is written once below and
-- put into one function per event (each names only the transition tables its event has), as static
-- SQL so that PL/pgSQL keeps its plan: on the claim and finish path that is about a millisecond less
-- per statement than building it each time.
DO $migration$
DECLARE
  record_changes constant text := $body$
    WITH changed AS (%s),
    net AS (
      SELECT reseller_id, coalesce(merchant_id, '') AS merchant_id, template_id,
             date_trunc('hour', coalesce(call_initiated_time, created_at) AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS hour,
             status, outcome, attempt_count, provider, duration_seconds, sentiment,
             (status = 'FINISHED' AND outcome IS NOT NULL
              AND outcome NOT IN ('no_answer', 'busy', 'failed', 'voicemail', 'PRECHECK_FAILED', 'BLACKLISTED', 'aborted', 'worker_lost', 'error')) AS reached,
             sum(sign)::int AS n
      FROM changed
      WHERE NOT is_playground AND execution_mode NOT IN ('TELEPHONY_TEST', 'WEBRTC_TEST')
      GROUP BY 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11
      HAVING sum(sign) <> 0),
    totals AS (
      INSERT INTO lead_stats_delta (reseller_id, merchant_id, template_id, hour, status, leads, dialled, connected, completed,
                                    with_duration, duration_sum, duration_min, duration_max, removed_min, removed_max,
                                    negative, neutral, positive)
      SELECT reseller_id, merchant_id, template_id, hour, status,
             sum(n),
             coalesce(sum(n) FILTER (WHERE attempt_count >= 1), 0),
             coalesce(sum(n) FILTER (WHERE attempt_count >= 1 AND duration_seconds > 0), 0),
             coalesce(sum(n) FILTER (WHERE attempt_count >= 1 AND duration_seconds > 0 AND reached), 0),
             coalesce(sum(n) FILTER (WHERE duration_seconds IS NOT NULL), 0),
             coalesce(sum(n::bigint * duration_seconds), 0),
             min(duration_seconds) FILTER (WHERE n > 0), max(duration_seconds) FILTER (WHERE n > 0),
             min(duration_seconds) FILTER (WHERE n < 0), max(duration_seconds) FILTER (WHERE n < 0),
             coalesce(sum(n) FILTER (WHERE sentiment < 0.4::real), 0),
             coalesce(sum(n) FILTER (WHERE sentiment >= 0.4::real AND sentiment <= 0.6::real), 0),
             coalesce(sum(n) FILTER (WHERE sentiment > 0.6::real), 0)
      FROM net
      GROUP BY 1, 2, 3, 4, 5)
    INSERT INTO lead_stats_breakdown_delta (reseller_id, merchant_id, template_id, hour, dimension, value, leads, reached, with_duration, duration_sum)
    SELECT reseller_id, merchant_id, template_id, hour, d.dimension, d.value,
           sum(n), coalesce(sum(n) FILTER (WHERE reached), 0),
           coalesce(sum(n) FILTER (WHERE duration_seconds IS NOT NULL), 0), coalesce(sum(n::bigint * duration_seconds), 0)
    FROM net
    CROSS JOIN LATERAL (VALUES ('outcome', outcome),
                               ('attempts', CASE WHEN status = 'FINISHED' AND attempt_count >= 1 THEN attempt_count::text END),
                               ('provider', provider)) AS d (dimension, value)
    WHERE d.value IS NOT NULL
    GROUP BY 1, 2, 3, 4, 5, 6
  $body$;
  changed_facts constant text :=
    '(n.reseller_id, n.merchant_id, n.template_id, n.call_initiated_time, n.created_at, n.status, n.outcome, n.attempt_count, '
    'n.provider, n.duration_seconds, n.sentiment, n.is_playground, n.execution_mode) IS DISTINCT FROM '
    '(o.reseller_id, o.merchant_id, o.template_id, o.call_initiated_time, o.created_at, o.status, o.outcome, o.attempt_count, '
    'o.provider, o.duration_seconds, o.sentiment, o.is_playground, o.execution_mode)';
BEGIN
  EXECUTE format('CREATE FUNCTION lead_stats_on_insert() RETURNS trigger LANGUAGE plpgsql AS %L',
    format('BEGIN %s; RETURN NULL; END', format(record_changes, 'SELECT n.*, 1 AS sign FROM new_rows n')));
  EXECUTE format('CREATE FUNCTION lead_stats_on_delete() RETURNS trigger LANGUAGE plpgsql AS %L',
    format('BEGIN %s; RETURN NULL; END', format(record_changes, 'SELECT o.*, -1 AS sign FROM old_rows o')));
  -- Most updates (lease renewals, call IDs, metadata, next_attempt_at) change no fact analytics read: they stop at the check.
  EXECUTE format('CREATE FUNCTION lead_stats_on_update() RETURNS trigger LANGUAGE plpgsql AS %L',
    format('BEGIN
              IF NOT EXISTS (SELECT 1 FROM new_rows n FULL JOIN old_rows o ON o.id = n.id
                             WHERE o.id IS NULL OR n.id IS NULL OR %s) THEN
                RETURN NULL;
              END IF;
              %s;
              RETURN NULL;
            END',
      changed_facts,
      format(record_changes, 'SELECT n.*, 1 AS sign FROM new_rows n UNION ALL SELECT o.*, -1 AS sign FROM old_rows o')));
END
$migration$;

-- Transition tables allow one event per trigger: three triggers.
CREATE TRIGGER leads_stats_insert AFTER INSERT ON leads REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION lead_stats_on_insert();
CREATE TRIGGER leads_stats_update AFTER UPDATE ON leads REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION lead_stats_on_update();
CREATE TRIGGER leads_stats_delete AFTER DELETE ON leads REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION lead_stats_on_delete();

-- The leads already there, as delta rows like any other change (the first fold moves them).
-- Creating the triggers above locked leads against writers until this migration commits, so no
-- change is counted twice or missed.
INSERT INTO lead_stats_delta (reseller_id, merchant_id, template_id, hour, status, leads, dialled, connected, completed,
                              with_duration, duration_sum, duration_min, duration_max, removed_min, removed_max, negative, neutral, positive)
SELECT reseller_id, coalesce(merchant_id, ''), template_id,
       date_trunc('hour', coalesce(call_initiated_time, created_at) AT TIME ZONE 'UTC') AT TIME ZONE 'UTC', status,
       count(*),
       count(*) FILTER (WHERE attempt_count >= 1),
       count(*) FILTER (WHERE attempt_count >= 1 AND duration_seconds > 0),
       count(*) FILTER (WHERE attempt_count >= 1 AND duration_seconds > 0 AND status = 'FINISHED' AND outcome IS NOT NULL
                          AND outcome NOT IN ('no_answer', 'busy', 'failed', 'voicemail', 'PRECHECK_FAILED', 'BLACKLISTED', 'aborted', 'worker_lost', 'error')),
       count(duration_seconds), coalesce(sum(duration_seconds), 0), min(duration_seconds), max(duration_seconds), NULL, NULL,
       count(*) FILTER (WHERE sentiment < 0.4::real),
       count(*) FILTER (WHERE sentiment >= 0.4::real AND sentiment <= 0.6::real),
       count(*) FILTER (WHERE sentiment > 0.6::real)
FROM leads
WHERE NOT is_playground AND execution_mode NOT IN ('TELEPHONY_TEST', 'WEBRTC_TEST')
GROUP BY 1, 2, 3, 4, 5;

INSERT INTO lead_stats_breakdown_delta (reseller_id, merchant_id, template_id, hour, dimension, value, leads, reached, with_duration, duration_sum)
SELECT l.reseller_id, coalesce(l.merchant_id, ''), l.template_id,
       date_trunc('hour', coalesce(l.call_initiated_time, l.created_at) AT TIME ZONE 'UTC') AT TIME ZONE 'UTC', d.dimension, d.value,
       count(*),
       count(*) FILTER (WHERE l.status = 'FINISHED' AND l.outcome IS NOT NULL
                          AND l.outcome NOT IN ('no_answer', 'busy', 'failed', 'voicemail', 'PRECHECK_FAILED', 'BLACKLISTED', 'aborted', 'worker_lost', 'error')),
       count(l.duration_seconds), coalesce(sum(l.duration_seconds), 0)
FROM leads l
CROSS JOIN LATERAL (VALUES ('outcome', l.outcome),
                           ('attempts', CASE WHEN l.status = 'FINISHED' AND l.attempt_count >= 1 THEN l.attempt_count::text END),
                           ('provider', l.provider)) AS d (dimension, value)
WHERE NOT l.is_playground AND l.execution_mode NOT IN ('TELEPHONY_TEST', 'WEBRTC_TEST') AND d.value IS NOT NULL
GROUP BY 1, 2, 3, 4, 5, 6;
