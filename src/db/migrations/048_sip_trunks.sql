-- SIP trunks: a reseller's own carrier (or PBX) that Dialer's SIP driver places calls through. The
-- password is kept for digest authentication and never returned by the API. A configuration whose
-- calling_provider is SIP names its trunk; outbound numbers of provider SIP are its caller IDs.
CREATE TABLE sip_trunks (
  id text PRIMARY KEY,
  reseller_id text NOT NULL REFERENCES resellers (id),
  name text NOT NULL,
  address text NOT NULL,
  transport text NOT NULL CHECK (transport IN ('udp', 'tcp', 'tls')),
  username text,
  password text,
  from_domain text,
  codecs text[] NOT NULL,
  max_channels integer CHECK (max_channels > 0),
  max_calls_per_second numeric CHECK (max_calls_per_second > 0),
  failover_trunk_id text REFERENCES sip_trunks (id) ON DELETE SET NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (reseller_id, name)
);
CREATE INDEX sip_trunks_reseller_idx ON sip_trunks (reseller_id);

ALTER TABLE configurations ADD COLUMN trunk_id text REFERENCES sip_trunks (id);
ALTER TABLE configurations DROP CONSTRAINT configurations_calling_provider_check;
ALTER TABLE configurations ADD CONSTRAINT configurations_calling_provider_check
  CHECK (calling_provider IN ('PROVIDER_A', 'PROVIDER_B', 'PROVIDER_C', 'SIP'));
ALTER TABLE outbound_numbers DROP CONSTRAINT outbound_numbers_provider_check;
ALTER TABLE outbound_numbers ADD CONSTRAINT outbound_numbers_provider_check
  CHECK (provider IN ('PROVIDER_A', 'PROVIDER_B', 'PROVIDER_C', 'SIP'));
