/**
 * Demo data (`dialer demo seed`): finished leads written the way a finished call leaves them, so
 * the dashboard and the benchmarks have data to show.
 *
 * The leads are written by the lifecycle's `insertFinishedLeads` (src/lifecycle/create.ts): the
 * row a finish leaves (status FINISHED with outcome, attempt count, call times, duration, cost,
 * sentiment, provider), at the times the demo spreads over past days rather than now(), and
 * without call_attempts history. Analytics see them exactly as real leads: the rollup is kept by
 * the trigger on leads, which fires for these INSERTs as for a finish's UPDATEs.
 */
import { systemPrincipal } from '../auth/index.js';
import type { Db } from '../db/index.js';
import { insertFinishedLeads } from '../lifecycle/index.js';
import { badRequest } from '../lib/errors.js';
import { TemplatesService } from '../templates/index.js';
import { tenantsService } from '../tenants/index.js';
import { generateDemoLeads, type DemoScope } from './demo-data.js';
import { foldAnalytics } from './fold.js';

/** Who makes the demo's reseller, merchants and templates. */
const DEMO_ACTOR = systemPrincipal('demo-seed', 'dialer demo seed');
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

/**
 * Where the demo leads go. Without IDs: a "Demo Reseller" with two demo merchants (found or
 * created). With --merchant-id: that merchant (and its reseller). With --reseller-id alone: its
 * merchants, or reseller-level leads when it has none. Templates: three demo templates of the
 * reseller (found or created, reseller-wide). What it creates it creates through the tenants' and
 * templates' services, as an API call would.
 */
export async function prepareDemoScope(db: Db, ids: { resellerId?: string; merchantId?: string }): Promise<DemoScope> {
  const tenants = tenantsService(db);
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
    resellerId = (await tenants.ensureReseller(DEMO_RESELLER)).id;
    merchantIds = [];
    for (const name of DEMO_MERCHANTS) {
      merchantIds.push((await tenants.ensureMerchant(resellerId, name, `${name.toLowerCase().replace(/\W+/g, '.')}@example.com`)).id);
    }
  }
  const templates: { id: string; name: string }[] = [];
  const templatesService = new TemplatesService(db);
  for (const name of DEMO_TEMPLATES) {
    const { id } = await templatesService.ensure(DEMO_ACTOR, { name, reseller_id: resellerId, merchant_id: null, flow: demoFlow(name) });
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
