-- Calling within the law (docs/compliance.md): consent kept with a lead, do-not-call lists that a
-- configuration honours, and jurisdictions' calling hours applied on top of its window.

-- The consent a lead was pushed with (source, captured_at, text, reference; revoked_at once the
-- callee opts out). NULL: none was given.
ALTER TABLE leads ADD COLUMN consent jsonb;

ALTER TABLE configurations
  ADD COLUMN require_consent boolean NOT NULL DEFAULT false,
  ADD COLUMN dnc_lists jsonb NOT NULL DEFAULT '[]',
  ADD COLUMN legal_hours jsonb NOT NULL DEFAULT '[]';

-- A named do-not-call list: a reseller's, or platform-wide (reseller_id NULL, kept by admins).
CREATE TABLE dnc_lists (
  id text PRIMARY KEY,
  reseller_id text REFERENCES resellers (id) ON DELETE CASCADE,
  name text NOT NULL,
  source text,
  version text,
  number_count bigint NOT NULL DEFAULT 0,
  imported_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX dnc_lists_scope_name_key ON dnc_lists (coalesce(reseller_id, ''), name);

-- Its numbers (E.164). The primary key answers the lookup (list, number) from its index alone.
CREATE TABLE dnc_numbers (
  list_id text NOT NULL REFERENCES dnc_lists (id) ON DELETE CASCADE,
  phone_number text NOT NULL,
  PRIMARY KEY (list_id, phone_number)
);
