-- What happens at the edges of a call, per configuration (docs/campaigns.md): leaving a message on
-- voicemail, offering the callee an opt-out, retrying by outcome, calling in the recipient's own
-- hours and at most so often a day. Every default is the behaviour before these columns existed.
ALTER TABLE configurations
  ADD COLUMN voicemail_action text NOT NULL DEFAULT 'hang_up' CHECK (voicemail_action IN ('hang_up', 'leave_message')),
  ADD COLUMN voicemail_message text,
  ADD COLUMN opt_out_enabled boolean NOT NULL DEFAULT true,
  -- {outcome: {"retry": boolean, "after_seconds": integer}}; NULL: unreached outcomes retry after retry_offset.
  ADD COLUMN retry_policy jsonb,
  ADD COLUMN window_timezone text NOT NULL DEFAULT 'configuration' CHECK (window_timezone IN ('configuration', 'recipient')),
  ADD COLUMN max_calls_per_number_per_day integer CHECK (max_calls_per_number_per_day IS NULL OR max_calls_per_number_per_day > 0);

-- An opt-out is kept on the reseller's blacklist with the lead it came from and what the callee said.
ALTER TABLE blacklist
  ADD COLUMN lead_id text,
  ADD COLUMN reason text;
