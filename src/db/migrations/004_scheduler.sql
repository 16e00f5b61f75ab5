-- The lead lifecycle engine.

-- One row per dial counted by a configuration's rate limit; the sliding window counts the rows of
-- the last rate_limit_window_seconds. Writers of one configuration take turns on an advisory lock.
CREATE TABLE rate_limit_events (
  configuration_id text NOT NULL,
  at timestamptz NOT NULL,
  lead_id text NOT NULL
);
CREATE INDEX rate_limit_events_idx ON rate_limit_events (configuration_id, at);

ALTER TABLE call_attempts ADD COLUMN error text;
ALTER TABLE call_attempts ADD COLUMN worker_id text;

-- The claim reads due leads in (next_attempt_at, id) order and stops at its batch size.
DROP INDEX leads_due_idx;
CREATE INDEX leads_due_idx ON leads (next_attempt_at, id) WHERE status IN ('BACKLOG', 'RETRY');
