-- How a trunk's calls are transferred to a human: 'refer' asks the carrier to call them (SIP REFER,
-- a cold transfer); 'bridge' has Dialer call them on the same trunk and join the two calls (warm).
ALTER TABLE sip_trunks ADD COLUMN transfer_method text NOT NULL DEFAULT 'refer' CHECK (transfer_method IN ('refer', 'bridge'));
