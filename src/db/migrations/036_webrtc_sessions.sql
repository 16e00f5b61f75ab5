-- Where each live WebRTC session is hosted (docs/webrtc.md, "Several processes"). A browser's peer
-- terminates on the process that answered its offer; an ICE restart, a hangup or a tts-speak for
-- it may reach any process behind a load balancer, which forwards it to the owner's internal
-- address found here. A row is written when the offer is answered and removed when the session's
-- outcome is recorded; a row left by a process that died names a process that no longer answers
-- (the lead's lease expires and recovery takes the lead back), and the next offer replaces it.
CREATE TABLE webrtc_sessions (
  lead_id text PRIMARY KEY REFERENCES leads (id) ON DELETE CASCADE ON UPDATE CASCADE,
  room text NOT NULL,
  -- The owner's origin (scheme, host, port) as other Dialer processes reach it.
  owner_url text NOT NULL,
  -- The owner's worker ID (the lead's locked_by while the session lives).
  worker_id text NOT NULL,
  started_at timestamptz NOT NULL DEFAULT now()
);
