-- A configuration's cap on live calls (docs/campaigns.md "A configuration's cap"): its PROCESSING
-- leads never exceed it, across all workers. Null (the default): no cap, the claim as before.
ALTER TABLE configurations
  ADD COLUMN max_concurrent_calls integer CHECK (max_concurrent_calls IS NULL OR max_concurrent_calls > 0);
