-- The lines of calls in progress, as they are spoken, so that a page watching a lead (GET /events)
-- sees them through any process while the call is live. A call's whole transcript is written with
-- its lead when it ends; these lines are a live copy, replaced by the next call of the lead and
-- pruned after a day.
CREATE TABLE live_transcript_lines (
  lead_id text NOT NULL,
  seq integer NOT NULL,
  role text NOT NULL,
  content text NOT NULL,
  at_ms integer,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (lead_id, seq)
);
CREATE INDEX live_transcript_lines_created_at ON live_transcript_lines (created_at);
