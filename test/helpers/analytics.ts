/** What the analytics exactness tests share: callers at three scopes, a seeded random source, tenants and a lead writer. */
import type { Principal } from '../../src/auth/index.js';
import type { Queryable } from '../../src/db/index.js';

export { prng } from '../../src/lib/random.js';

export const ADMIN: Principal = { kind: 'user', id: 'a', label: 'admin', role: 'admin', resellerId: null, merchantId: null };
export const R1: Principal = { kind: 'user', id: 'r1', label: 'reseller', role: 'reseller', resellerId: 'r1', merchantId: null };
export const M1: Principal = { kind: 'user', id: 'm1', label: 'merchant', role: 'merchant', resellerId: 'r1', merchantId: 'm1' };

/** A lead row as the exactness tests write it; `payload` is JSON text (so any JSON, not only objects). */
export interface AnalyticsTestLead {
  id: string;
  reseller: string;
  merchant: string | null;
  template: string;
  status: string;
  outcome: string | null;
  attempts: number;
  callAt: string | null;
  createdAt: string;
  duration: number | null;
  sentiment: number | null;
  provider: string | null;
  playground: boolean;
  mode: string;
  payload: string;
}

/** The resellers r1 and r2, their merchants m1, m1b and m2, and templates t1, t2 (r1) and t3 (r2). */
export async function seedAnalyticsTenants(db: Queryable): Promise<void> {
  await db.query(`INSERT INTO resellers (id, name) VALUES ('r1', 'R1'), ('r2', 'R2')`);
  await db.query(`INSERT INTO merchants (id, reseller_id, name, contact_email) VALUES ('m1', 'r1', 'M1', 'm1@x'), ('m1b', 'r1', 'M1b', 'm1b@x'), ('m2', 'r2', 'M2', 'm2@x')`);
  await db.query(`INSERT INTO templates (id, name, reseller_id, flow) VALUES ('t1', 't1', 'r1', '{}'), ('t2', 't2', 'r1', '{}'), ('t3', 't3', 'r2', '{}')`);
}

/** Writes `leads` in one multi-row statement, as a batch import would: each trigger runs once. */
export async function insertAnalyticsLeads(db: Queryable, leads: AnalyticsTestLead[]): Promise<void> {
  const values: unknown[] = [];
  const rows = leads.map((l) => {
    const at = values.length;
    values.push(l.id, l.reseller, l.merchant, l.template, l.status, l.outcome, l.attempts, l.callAt, l.duration, l.sentiment, l.provider, l.payload, l.playground, l.mode, l.createdAt);
    const p = (i: number) => `$${at + i}`;
    return `(${p(1)}, ${p(2)}, ${p(3)}, ${p(4)}, 'tpl', ${p(1)}, ${p(5)}, ${p(6)}, ${p(7)}::int, ${p(8)}::timestamptz, ${p(9)}::int, ${p(10)}::real, ${p(11)}, ${p(12)}::jsonb, ${p(13)}::boolean, ${p(14)}, ${p(15)}::timestamptz)`;
  });
  await db.query(
    `INSERT INTO leads (id, reseller_id, merchant_id, template_id, template_name, request_id, status, outcome, attempt_count,
                        call_initiated_time, duration_seconds, sentiment, provider, payload, is_playground, execution_mode, created_at)
     VALUES ${rows.join(', ')}`,
    values,
  );
}
