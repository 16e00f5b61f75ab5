-- The sandbox line's SIP trunk: a trunk the service owns in a reseller (made on its first sandbox
-- call over SIP), whose far side is the simulated customer inside each Dialer process: its calls go
-- to that process's own far side (the stored address is never dialled), and the API does not change it.
ALTER TABLE sip_trunks ADD COLUMN sandbox boolean NOT NULL DEFAULT false;
CREATE UNIQUE INDEX sip_trunks_sandbox_key ON sip_trunks (reseller_id) WHERE sandbox;

-- An attempt through a SIP trunk keeps its own SIP outcome (the lead's metaData keeps only its
-- last attempt's): the final status of a refused INVITE, the statuses seen, the trunk, and the
-- trunks that refused it before a failover. A trunk's recent failures are read from them.
CREATE INDEX call_attempts_sip_failed_idx ON call_attempts ((meta_data->>'sip_trunk_id'), started_at DESC)
  WHERE meta_data ? 'sip_status';
CREATE INDEX call_attempts_sip_failover_idx ON call_attempts USING gin ((meta_data->'sip_failover') jsonb_path_ops)
  WHERE meta_data ? 'sip_failover';

-- A trunk's calls per second: the leads whose call it took lately (SIP leads only).
CREATE INDEX leads_trunk_started_idx ON leads (trunk_id, call_initiated_time) WHERE trunk_id IS NOT NULL;
