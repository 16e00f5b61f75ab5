/**
 * Demo data (`dialer demo seed`): finished leads written the way a finished call leaves them, so
 * the dashboard and the benchmarks have data to show.
 *
 * insertFinishedLeads writes the final row the scheduler's finishAttempt (src/lifecycle/finish.ts)
 * leaves: status FINISHED with outcome, attempt_count, call_id, call times, duration, cost,
 * sentiment, provider. It does not go through finishAttempt itself: that works one leased lead per
 * transaction and stamps now(), while the demo needs a million leads spread over past days. It
 * writes no call_attempts history. Analytics see demo leads exactly as real ones: the rollup is kept
 * by a trigger on leads (migration 005), which fires for these INSERTs as for finishAttempts'
 * UPDATEs.
 */
import { randomUUID } from 'node:crypto';
import type { Db, Queryable } from '../db/index.js';
import { badRequest } from '../lib/errors.js';
import { generateDemoLeads, type DemoScope } from './demo-data.js';
import { foldAnalytics } from './fold.js';

export type ExecutionMode = 'TELEPHONY' | 'TELEPHONY_TEST' | 'WEBRTC' | 'WEBRTC_TEST' | 'WEBRTC_STREAM';

/** A lead as it is once its last call has ended (status FINISHED). */
export interface FinishedLead {
  id: string;
  reseller_id: string;
  merchant_id: string | null;
  template_id: string;
  template_name: string;
  request_id: string;
  outcome: string;
  attempt_count: number;
  call_id: string | null;
  call_initiated_time: Date | null;
  call_end_time: Date | null;
  duration_seconds: number | null;
  /** numeric(12, 4), as text. */
  cost: string | null;
  sentiment: number | null;
  provider: string | null;
  execution_mode: ExecutionMode;
  is_playground: boolean;
  payload: Record<string, unknown>;
  meta_data: Record<string, unknown>;
  created_at: Date;
}

const isoOrNull = (d: Date | null) => (d === null ? null : d.toISOString());

/**
 * Stores finished leads in one statement: one array per column, unnested, so a batch of thousands
 * costs one round trip and a fixed number of parameters. Returns the number of rows written.
 */
export async function insertFinishedLeads(db: Queryable, rows: readonly FinishedLead[]): Promise<number> {
  if (rows.length === 0) return 0;
  const column = <T>(pick: (row: FinishedLead) => T) => rows.map(pick);
  const { rowCount } = await db.query(
    `INSERT INTO leads (id, reseller_id, merchant_id, template_id, template_name, request_id, status, outcome, attempt_count,
                        call_id, call_initiated_time, call_end_time, duration_seconds, cost, sentiment, provider,
                        execution_mode, is_playground, payload, meta_data, created_at, updated_at)
     SELECT id, reseller_id, merchant_id, template_id, template_name, request_id, 'FINISHED', outcome, attempt_count,
            call_id, call_initiated_time, call_end_time, duration_seconds, cost, sentiment, provider,
            execution_mode, is_playground, payload, meta_data, created_at, coalesce(call_end_time, created_at)
     FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::int[],
                 $9::text[], $10::timestamptz[], $11::timestamptz[], $12::int[], $13::numeric[], $14::real[], $15::text[],
                 $16::text[], $17::boolean[], $18::jsonb[], $19::jsonb[], $20::timestamptz[])
       AS t (id, reseller_id, merchant_id, template_id, template_name, request_id, outcome, attempt_count,
             call_id, call_initiated_time, call_end_time, duration_seconds, cost, sentiment, provider,
             execution_mode, is_playground, payload, meta_data, created_at)`,
    [
      column((r) => r.id),
      column((r) => r.reseller_id),
      column((r) => r.merchant_id),
      column((r) => r.template_id),
      column((r) => r.template_name),
      column((r) => r.request_id),
      column((r) => r.outcome),
      column((r) => r.attempt_count),
      column((r) => r.call_id),
      column((r) => isoOrNull(r.call_initiated_time)),
      column((r) => isoOrNull(r.call_end_time)),
      column((r) => r.duration_seconds),
      column((r) => r.cost),
      column((r) => r.sentiment),
      column((r) => r.provider),
      column((r) => r.execution_mode),
      column((r) => r.is_playground),
      column((r) => JSON.stringify(r.payload)),
      column((r) => JSON.stringify(r.meta_data)),
      column((r) => r.created_at.toISOString()),
    ],
  );
  return rowCount;
}

const DEMO_RESELLER = 'Demo Reseller';
/** Batches between two folds of the rollup's deltas while seeding. */
const FOLD_EVERY_BATCHES = 10;
const DEMO_MERCHANTS = ['Demo Clinic', 'Demo Store'];
const DEMO_TEMPLATES = ['demo_appointment_reminder', 'demo_payment_reminder', 'demo_feedback_survey'];

/** A small valid flow (see src/voice/flow/schema.ts) for the demo templates. */
function demoFlow(name: string) {
  return {
    initial_node: 'greet',
    nodes: [
      {
        node_name: 'greet',
        task_messages: [{ role: 'system', content: `Demo template ${name}: greet {customer_name} and ask whether they can confirm.` }],
        functions: [
          { name: 'confirm', description: 'The customer confirmed', transition_to: 'bye' },
          { name: 'decline', description: 'The customer declined', transition_to: 'bye' },
        ],
      },
      { node_name: 'bye', task_messages: [{ role: 'system', content: 'Thank them and say goodbye.' }], post_actions: [{ type: 'end_conversation' }] },
    ],
  };
}

async function findOrCreate(db: Queryable, find: string, findParams: unknown[], insert: string, insertParams: unknown[]): Promise<string> {
  const found = await db.query<{ id: string }>(find, findParams);
  if (found.rows[0]) return found.rows[0].id;
  const created = await db.query<{ id: string }>(insert, insertParams);
  return created.rows[0]!.id;
}

/**
 * Where the demo leads go. Without IDs: a "Demo Reseller" with two demo merchants (found or
 * created). With --merchant-id: that merchant (and its reseller). With --reseller-id alone: its
 * merchants, or reseller-level leads when it has none. Templates: three demo templates of the
 * reseller (found or created, reseller-wide).
 */
export async function prepareDemoScope(db: Queryable, ids: { resellerId?: string; merchantId?: string }): Promise<DemoScope> {
  let resellerId = ids.resellerId;
  let merchantIds: (string | null)[];
  if (ids.merchantId !== undefined) {
    const { rows } = await db.query<{ reseller_id: string }>('SELECT reseller_id FROM merchants WHERE id = $1', [ids.merchantId]);
    const merchant = rows[0];
    if (!merchant) throw badRequest(`merchant ${ids.merchantId} does not exist`);
    if (resellerId !== undefined && merchant.reseller_id !== resellerId) throw badRequest(`merchant ${ids.merchantId} is not a merchant of reseller ${resellerId}`);
    resellerId = merchant.reseller_id;
    merchantIds = [ids.merchantId];
  } else if (resellerId !== undefined) {
    const exists = await db.query('SELECT 1 FROM resellers WHERE id = $1', [resellerId]);
    if (exists.rows.length === 0) throw badRequest(`reseller ${resellerId} does not exist`);
    const { rows } = await db.query<{ id: string }>('SELECT id FROM merchants WHERE reseller_id = $1 ORDER BY created_at, id LIMIT 20', [resellerId]);
    merchantIds = rows.length > 0 ? rows.map((r) => r.id) : [null];
  } else {
    resellerId = await findOrCreate(
      db,
      'SELECT id FROM resellers WHERE lower(name) = lower($1)',
      [DEMO_RESELLER],
      'INSERT INTO resellers (id, name) VALUES ($1, $2) RETURNING id',
      [randomUUID(), DEMO_RESELLER],
    );
    merchantIds = [];
    for (const name of DEMO_MERCHANTS) {
      merchantIds.push(
        await findOrCreate(
          db,
          'SELECT id FROM merchants WHERE reseller_id = $1 AND lower(name) = lower($2)',
          [resellerId, name],
          'INSERT INTO merchants (id, reseller_id, name, contact_email) VALUES ($1, $2, $3, $4) RETURNING id',
          [randomUUID(), resellerId, name, `${name.toLowerCase().replace(/\W+/g, '.')}@example.com`],
        ),
      );
    }
  }
  const templates: { id: string; name: string }[] = [];
  for (const name of DEMO_TEMPLATES) {
    const id = await findOrCreate(
      db,
      'SELECT id FROM templates WHERE reseller_id = $1 AND name = $2',
      [resellerId, name],
      'INSERT INTO templates (id, name, reseller_id, merchant_id, flow) VALUES ($1, $2, $3, NULL, $4::jsonb) RETURNING id',
      [randomUUID(), name, resellerId, JSON.stringify(demoFlow(name))],
    );
    templates.push({ id, name });
  }
  return { resellerId, merchantIds, templates };
}

export interface SeedOptions {
  leads: number;
  days?: number;
  resellerId?: string;
  merchantId?: string;
  seed?: number;
  now?: Date;
  /** Rows per INSERT. */
  batchSize?: number;
  onProgress?: (written: number) => void;
}

/**
 * Writes `leads` demo leads; returns where they went. The leads trigger counts them in the
 * analytics rollup like any other write; the deltas are folded every few batches (so they never
 * pile up) and at the end. Planner statistics are refreshed at the end.
 */
export async function seedDemoLeads(db: Db, options: SeedOptions): Promise<DemoScope & { written: number }> {
  const scope = await prepareDemoScope(db, {
    ...(options.resellerId === undefined ? {} : { resellerId: options.resellerId }),
    ...(options.merchantId === undefined ? {} : { merchantId: options.merchantId }),
  });
  let written = 0;
  let batches = 0;
  for (const batch of generateDemoLeads(scope, {
    count: options.leads,
    days: options.days ?? 90,
    now: options.now ?? new Date(),
    seed: options.seed ?? 1,
    batchSize: options.batchSize ?? 5000,
  })) {
    written += await insertFinishedLeads(db, batch);
    if (++batches % FOLD_EVERY_BATCHES === 0) await foldAnalytics(db);
    options.onProgress?.(written);
  }
  await foldAnalytics(db);
  // Fresh planner statistics: the dashboard's plans depend on them.
  await db.query('ANALYZE leads');
  return { ...scope, written };
}
