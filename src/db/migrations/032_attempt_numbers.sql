-- The number each attempt dialled, so that a configuration's max_calls_per_number_per_day can count
-- the dials of one number (across all of a reseller's leads) since the start of the recipient's day.
ALTER TABLE call_attempts ADD COLUMN phone_number text;
CREATE INDEX call_attempts_phone_started_idx ON call_attempts (phone_number, started_at) WHERE phone_number IS NOT NULL;
