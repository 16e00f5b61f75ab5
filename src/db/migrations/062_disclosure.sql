-- A configuration's disclosure (docs/compliance.md): {text, languages?}, spoken before the agent's
-- first line on each outbound call. NULL: none.
ALTER TABLE configurations ADD COLUMN disclosure jsonb;
