-- Forgetting on request and by age (docs/compliance.md, "Erasure" and "Retention").

-- The key of a phone number's one-way hash: an erased number is kept only as
-- 'sha256:' || hex(sha256(key || number)), so that an opt-out still stops a later push for the same
-- number. Random per installation: the hash of a number cannot be computed without the database.
INSERT INTO settings (key, value)
VALUES ('phone_hash_key', replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', ''))
ON CONFLICT (key) DO NOTHING;

-- Each reseller's retention: recordings and transcripts of calls that ended more than so many days
-- ago are deleted by the retention job. NULL: kept.
CREATE TABLE privacy_retention (
  reseller_id text PRIMARY KEY REFERENCES resellers (id) ON DELETE CASCADE,
  recordings_days integer CHECK (recordings_days BETWEEN 1 AND 36500),
  transcripts_days integer CHECK (transcripts_days BETWEEN 1 AND 36500),
  updated_at timestamptz NOT NULL DEFAULT now()
);

-- The leads the retention job looks at: those that still hold a recording or a transcript, by
-- reseller and end of call. A lead leaves the index once both are gone.
CREATE INDEX leads_recorded_content_idx ON leads (reseller_id, call_end_time)
  WHERE recording_url IS NOT NULL OR meta_data ? 'transcription';
