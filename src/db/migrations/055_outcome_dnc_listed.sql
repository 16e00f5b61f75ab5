-- A new outcome that is not a conversation: DNC_LISTED (a do-not-call list stopped the lead at dial
-- time, without a dial). The analytics triggers count a finished lead as reached unless its outcome
-- is one of Dialer's not-reached outcomes (src/lifecycle/outcomes.ts); their functions are written
-- again here with the list that includes it, the statement otherwise as migration 031 wrote it.
-- No lead can have the outcome yet, so nothing counted so far changes.
DO $migration$
DECLARE
  record_changes constant text := $body$
    WITH changed AS (%s),
    net AS (
      SELECT reseller_id, coalesce(merchant_id, '') AS merchant_id, template_id,
             date_trunc('hour', coalesce(call_initiated_time, created_at) AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS hour,
             status, outcome, attempt_count, provider, duration_seconds, sentiment,
             (status = 'FINISHED' AND outcome IS NOT NULL
              AND outcome NOT IN ('no_answer', 'busy', 'failed', 'error', 'worker_lost', 'voicemail', 'voicemail_left', 'PRECHECK_FAILED', 'BLACKLISTED', 'DNC_LISTED', 'aborted')) AS reached,
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
  EXECUTE format('CREATE OR REPLACE FUNCTION lead_stats_on_insert() RETURNS trigger LANGUAGE plpgsql AS %L',
    format('BEGIN %s; RETURN NULL; END', format(record_changes, 'SELECT n.*, 1 AS sign FROM new_rows n')));
  EXECUTE format('CREATE OR REPLACE FUNCTION lead_stats_on_delete() RETURNS trigger LANGUAGE plpgsql AS %L',
    format('BEGIN %s; RETURN NULL; END', format(record_changes, 'SELECT o.*, -1 AS sign FROM old_rows o')));
  -- Most updates (lease renewals, call IDs, metadata, next_attempt_at) change no fact analytics read: they stop at the check.
  EXECUTE format('CREATE OR REPLACE FUNCTION lead_stats_on_update() RETURNS trigger LANGUAGE plpgsql AS %L',
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
