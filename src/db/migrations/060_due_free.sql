-- The due leads without a campaign, in due order: the free part of a claim's queue head. Through
-- leads_due_idx a claim walked every due lead of every campaign (a paused or paced campaign of
-- 100,000 queued leads: a second a claim) before it found none free; and the embedded database
-- has no autovacuum to keep the planner's statistics fresh, so the plan must not hang on them.
CREATE INDEX leads_due_free_idx ON leads (next_attempt_at, id) WHERE status IN ('BACKLOG', 'RETRY') AND campaign_id IS NULL;
