-- Campaigns (docs/campaigns.md): a named set of leads of one template, run with a cap on live
-- calls, a pace of call starts, a window of dates, and a breaker that pauses it when too many
-- attempts fail. A lead without a campaign behaves as before.
CREATE TABLE campaigns (
  id text PRIMARY KEY,
  -- A campaign's leads hold its owner and template in place; a campaign without leads goes with them.
  reseller_id text NOT NULL REFERENCES resellers (id) ON DELETE CASCADE,
  merchant_id text REFERENCES merchants (id) ON DELETE CASCADE,
  template_id text NOT NULL REFERENCES templates (id) ON DELETE CASCADE,
  template_name text NOT NULL,
  name text NOT NULL,
  -- What a person (or the breaker) decided; `scheduled`, `running` and `completed` are read from
  -- the dates and the leads (see src/campaigns/repository.ts).
  state text NOT NULL DEFAULT 'active' CHECK (state IN ('active', 'paused', 'stopped')),
  paused_reason text,
  max_concurrent_calls integer CHECK (max_concurrent_calls IS NULL OR max_concurrent_calls > 0),
  max_calls_per_second double precision CHECK (max_calls_per_second IS NULL OR max_calls_per_second > 0),
  start_at timestamptz,
  end_at timestamptz,
  breaker_failure_ratio double precision CHECK (breaker_failure_ratio IS NULL OR (breaker_failure_ratio > 0 AND breaker_failure_ratio <= 1)),
  breaker_window_seconds integer CHECK (breaker_window_seconds IS NULL OR breaker_window_seconds > 0),
  breaker_min_calls integer CHECK (breaker_min_calls IS NULL OR breaker_min_calls > 0),
  -- The pace: no call of the campaign starts before this instant (moved on by 1/rate at each start).
  next_start_at timestamptz,
  -- When a claim last looked at the breaker (at most once a second).
  breaker_checked_at timestamptz,
  -- The breaker counts the attempts that ended since: a resume starts its count afresh.
  breaker_since timestamptz,
  stopped_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CHECK (end_at IS NULL OR start_at IS NULL OR end_at > start_at)
);
CREATE INDEX campaigns_owner_idx ON campaigns (reseller_id, merchant_id, created_at);

ALTER TABLE leads ADD COLUMN campaign_id text REFERENCES campaigns (id);
-- Progress, results and the cap (PROCESSING leads of a campaign) read a campaign's leads by status.
CREATE INDEX leads_campaign_idx ON leads (campaign_id, status) WHERE campaign_id IS NOT NULL;
-- The breaker reads the attempts that ended in its window.
CREATE INDEX call_attempts_ended_idx ON call_attempts (ended_at) WHERE ended_at IS NOT NULL;
