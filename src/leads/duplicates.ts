/**
 * Duplicates caught at the door of an import.
 *
 * Terminology
 * - in_file: the number appears earlier in the same file (or batch); the first row is kept.
 * - in_campaign: a lead of the campaign with this number is still waiting or live (BACKLOG, RETRY,
 *   PROCESSING).
 * - recent_call: the reseller dialled this number in the last `dedupe_days` days.
 *
 * One home for the rule: the preview (POST /leads/import/preview), POST /leads/batch with
 * `skip_duplicates`, `dialer leads import` and the dashboard's import all ask `findDuplicates`.
 */
import type { Queryable } from '../db/index.js';

export const DUPLICATE_KINDS = ['in_file', 'in_campaign', 'recent_call'] as const;
export type DuplicateKind = (typeof DUPLICATE_KINDS)[number];

export interface Duplicate {
  /** Position of the row among those checked (0-based). */
  index: number;
  phone_number: string;
  kind: DuplicateKind;
  /** in_file: the position of the row that keeps the number. */
  first_index?: number;
  /** in_campaign: the waiting lead; recent_call: the lead last dialled. */
  lead_id?: string;
  /** recent_call: when the number was last dialled. */
  called_at?: string;
}

export interface DuplicateScope {
  resellerId: string;
  campaignId?: string | undefined;
  /** Numbers dialled within this many days count; absent or 0: not checked. */
  dedupeDays?: number | undefined;
}

/** Waiting or live leads of a campaign, by number. */
const QUEUED_IN_CAMPAIGN = `
  SELECT DISTINCT ON (payload ->> 'customer_mobile_number') payload ->> 'customer_mobile_number' AS phone, id
    FROM leads
   WHERE campaign_id = $1 AND status IN ('BACKLOG', 'RETRY', 'PROCESSING')
     AND payload ->> 'customer_mobile_number' = ANY($2::text[])
   ORDER BY payload ->> 'customer_mobile_number', created_at`;

/** The reseller's last dial of each number since a moment (call_attempts_phone_started_idx). */
const CALLED_SINCE = `
  SELECT DISTINCT ON (a.phone_number) a.phone_number AS phone, a.lead_id, a.started_at
    FROM call_attempts a JOIN leads l ON l.id = a.lead_id
   WHERE a.phone_number = ANY($1::text[]) AND a.started_at >= $2 AND l.reseller_id = $3 AND NOT l.is_playground
   ORDER BY a.phone_number, a.started_at DESC`;

/**
 * The duplicates among `phones` (one entry per row; undefined for a row without a number), each
 * row reported once, by the first kind that applies (in_file, then in_campaign, then recent_call).
 */
export async function findDuplicates(db: Queryable, phones: readonly (string | undefined)[], scope: DuplicateScope): Promise<Duplicate[]> {
  const first = new Map<string, number>();
  const found = new Map<number, Duplicate>();
  phones.forEach((phone, index) => {
    if (!phone) return;
    const seen = first.get(phone);
    if (seen === undefined) first.set(phone, index);
    else found.set(index, { index, phone_number: phone, kind: 'in_file', first_index: seen });
  });
  const distinct = [...first.keys()];
  if (distinct.length > 0 && scope.campaignId) {
    const { rows } = await db.query<{ phone: string; id: string }>(QUEUED_IN_CAMPAIGN, [scope.campaignId, distinct]);
    for (const r of rows) {
      const index = first.get(r.phone)!;
      found.set(index, { index, phone_number: r.phone, kind: 'in_campaign', lead_id: r.id });
    }
  }
  if (distinct.length > 0 && scope.dedupeDays) {
    const since = new Date(Date.now() - scope.dedupeDays * 86_400_000);
    const { rows } = await db.query<{ phone: string; lead_id: string; started_at: Date | string }>(CALLED_SINCE, [distinct, since, scope.resellerId]);
    for (const r of rows) {
      const index = first.get(r.phone)!;
      if (found.has(index)) continue;
      found.set(index, { index, phone_number: r.phone, kind: 'recent_call', lead_id: r.lead_id, called_at: new Date(r.started_at).toISOString() });
    }
  }
  return [...found.values()].sort((a, b) => a.index - b.index);
}

/** How many of each kind. */
export function countDuplicates(duplicates: readonly Duplicate[]): Record<DuplicateKind, number> {
  const counts = { in_file: 0, in_campaign: 0, recent_call: 0 };
  for (const d of duplicates) counts[d.kind]++;
  return counts;
}
