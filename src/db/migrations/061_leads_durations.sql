-- The leads with a call duration, by reseller and analytics time: what a rollup fold reads to
-- recompute a bucket's shortest and longest call when a removed duration may have been one. Through
-- leads_analytics_idx it read every lead of the bucket's hour, a whole import's queued leads among
-- them (a second a fold at 100,000), and the embedded database, which has no vacuum to mark pages
-- all-visible, visited each one's row too.
CREATE INDEX leads_durations_idx ON leads (reseller_id, (coalesce(call_initiated_time, created_at)))
  INCLUDE (merchant_id, template_id, status, duration_seconds)
  WHERE duration_seconds IS NOT NULL AND NOT is_playground AND execution_mode NOT IN ('TELEPHONY_TEST', 'WEBRTC_TEST');
