-- A SIP trunk's caps across all workers (docs/trunks.md): the trunk a live call holds is kept on its
-- lead (chosen at claim: the configuration's trunk, or its failover when that one is full or
-- refuses the call), so a trunk's channels in use are its PROCESSING leads; and the instant its
-- pace (max_calls_per_second) allows the next call to start.
ALTER TABLE leads ADD COLUMN trunk_id text;
ALTER TABLE sip_trunks ADD COLUMN next_start_at timestamptz;
