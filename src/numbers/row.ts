/**
 * An outbound number as stored. The dialler takes a free one with the claim of the lead it calls
 * and gives it back when the attempt ends: both are the lifecycle's (src/lifecycle/claim.ts,
 * src/lifecycle/numbers.ts); this feature holds the API that adds, changes and removes numbers.
 */
export interface OutboundNumberRow {
  id: string;
  phone_number: string;
  provider: 'PROVIDER_A' | 'PROVIDER_B' | 'PROVIDER_C' | 'SIP';
  status: 'AVAILABLE' | 'IN_USE' | 'DISABLED';
  channel: string;
  /** The lead whose call holds the number while IN_USE. */
  lead_id: string | null;
  created_at: Date;
  updated_at: Date;
  /** Resting (skipped by the claim) until then; null or past: not resting. */
  rested_until: Date | null;
  /** Why it was rested (its health, or an operator). */
  rest_reason: string | null;
}

/** A number with its health as last measured (null figures: never measured yet). */
export interface NumberWithHealth extends OutboundNumberRow {
  calls: number | null;
  answered: number | null;
  short_calls: number | null;
  pool_calls: number | null;
  pool_answered: number | null;
  measured_at: Date | null;
}
