-- Analytics: POST /analytics reads the leads themselves.
--
-- Terms (see src/analytics/filters.ts): a *live* lead is not a test (not is_playground, not a
-- *_TEST execution mode); analytics count live leads only. Its *activity time* is
-- coalesce(call_initiated_time, created_at): the start of its (latest) call, or its push time when
-- it was never dialled. Date filters and time buckets use it.
--
-- Both indexes are partial on live leads, with the predicate and the activity-time expression
-- written exactly as the queries write them, so the planner matches them.
--
-- 1. A covering index: every column a query without payload filter reads is in it, so such queries
--    are index-only scans of a reseller's range of activity time (or of the whole index for the
--    admin), never touching the wide heap rows (payload, meta_data, trace_scores).
CREATE INDEX leads_analytics_idx ON leads (reseller_id, (coalesce(call_initiated_time, created_at)))
  INCLUDE (merchant_id, template_id, status, outcome, attempt_count, duration_seconds, sentiment, provider)
  WHERE NOT is_playground AND execution_mode NOT IN ('TELEPHONY_TEST', 'WEBRTC_TEST');
-- 2. payload_filters are matched by containment (payload @> '{"k": "v"}'), which jsonb_path_ops serves.
CREATE INDEX leads_analytics_payload_idx ON leads USING gin (payload jsonb_path_ops)
  WHERE NOT is_playground AND execution_mode NOT IN ('TELEPHONY_TEST', 'WEBRTC_TEST');
