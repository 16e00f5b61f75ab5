-- A password reset ends the user's open sessions: access tokens issued before `sessions_since`
-- (whole seconds, as a token's issue time is) are refused. NULL: every unexpired token is good.
ALTER TABLE users ADD COLUMN sessions_since timestamptz;
