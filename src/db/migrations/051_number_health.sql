-- Numbers that stay healthy (docs/leads.md, "Outbound number"). A number rested by its health, or
-- by an operator, is skipped by the claim until `rested_until`; its health is then measured afresh
-- from `health_since` (the calls that got it rested are not held against it again). Neither column
-- is indexed, so taking and giving back a number stay heap-only (HOT) updates (migrations 008, 038).
ALTER TABLE outbound_numbers ADD COLUMN rested_until timestamptz;
ALTER TABLE outbound_numbers ADD COLUMN health_since timestamptz;
ALTER TABLE outbound_numbers ADD COLUMN rest_reason text;

-- Each number's health as last measured by a worker's health round: its window's dialled calls,
-- those answered (a conversation took place) and those answered but shorter than the short-call
-- threshold. A table of its own: the round rewrites it without touching (or locking) the pool
-- that claims take numbers from.
CREATE TABLE outbound_number_health (
  number_id text PRIMARY KEY REFERENCES outbound_numbers (id) ON DELETE CASCADE,
  calls integer NOT NULL,
  answered integer NOT NULL,
  short_calls integer NOT NULL,
  pool_calls integer NOT NULL,
  pool_answered integer NOT NULL,
  measured_at timestamptz NOT NULL DEFAULT now()
);

-- A number's latest attempts, newest first: the health window reads at most its last N of them.
CREATE INDEX call_attempts_number_started_idx ON call_attempts (outbound_number_id, started_at DESC) WHERE outbound_number_id IS NOT NULL;

-- Local presence: the free numbers of a provider whose E.164 starts with the callee's country code
-- or NANP area code (a LIKE prefix, served by this index). phone_number is kept for life: HOT stays.
CREATE INDEX outbound_numbers_prefix_idx ON outbound_numbers (provider, phone_number text_pattern_ops);

-- A configuration's local presence (off unless asked for): docs/leads.md, "Outbound number".
ALTER TABLE configurations ADD COLUMN local_presence boolean NOT NULL DEFAULT false;
