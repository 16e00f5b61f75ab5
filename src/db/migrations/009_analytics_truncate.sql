-- TRUNCATE fires no row or statement triggers of INSERT, UPDATE or DELETE, so emptying `leads` with
-- it (an operator clearing a demo, a benchmark between runs) left the analytics rollup (migration
-- 006) and the payload terms (migration 007) counting leads that no longer exist. Emptied with the
-- leads, they stay exact: an empty `leads` aggregates to nothing, pending deltas included.
CREATE FUNCTION leads_truncated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  TRUNCATE lead_stats, lead_stats_delta, lead_stats_breakdown, lead_stats_breakdown_daily, lead_stats_breakdown_delta, lead_payload_terms;
  RETURN NULL;
END
$$;
CREATE TRIGGER leads_analytics_truncate AFTER TRUNCATE ON leads FOR EACH STATEMENT EXECUTE FUNCTION leads_truncated();
