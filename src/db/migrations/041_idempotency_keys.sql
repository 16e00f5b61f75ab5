-- Idempotency keys of pushes (docs/api-guide.md, "Retrying a push safely"): a client that sends
-- an Idempotency-Key with POST /leads or POST /leads/batch and retries gets the first answer
-- again instead of a second lead. One row per key and principal: claimed when the request starts
-- (claim_token, claimed_at), answered in the same transaction that queues the leads (so a key is
-- never answered without its leads, nor leads written without their key's answer), removed when
-- the request failed with nothing written, and pruned 24 hours after it was first used.
CREATE TABLE idempotency_keys (
  -- Whose key: the principal (user or s2s token), so two clients never share an answer.
  scope text NOT NULL,
  key text NOT NULL,
  -- A hash of the method, the route and the request body's bytes.
  fingerprint text NOT NULL,
  claim_token text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  claimed_at timestamptz NOT NULL DEFAULT now(),
  -- The first answer, null while the request is under way.
  response_status integer,
  response_type text,
  response_body text,
  PRIMARY KEY (scope, key)
);
CREATE INDEX idempotency_keys_created_at_idx ON idempotency_keys (created_at);
