-- The queue head by campaign: a claim reads the due leads without a campaign (campaign_id IS NULL)
-- and those of each campaign that may start calls now, each in due order through this index, so a
-- paused, full or paced campaign's queued leads are never walked (docs/dispatch.md).
CREATE INDEX leads_due_campaign_idx ON leads (campaign_id, next_attempt_at, id) WHERE status IN ('BACKLOG', 'RETRY');
