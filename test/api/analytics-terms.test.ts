/**
 * Payload filters over the payload terms (migration 007) stay exact: every query type, with one,
 * two and three payload keys, strings, numbers (1, 1.0 and 1e0 are one number; "1" is not), booleans
 * and null, values nested in arrays or objects (which containment does not match), keys and values
 * too long to be stored (those filters go to the leads), combined with every other filter, for an
 * admin, a reseller and a merchant: the terms' rows (source 'terms', which fails rather than fall
 * back) equal the leads' (source 'live', containment over the GIN index) and the default's. After
 * inserts, updates (claims, finishes, payload edits, test flags, tenants), deletes, the scheduler's
 * finishAttempts and random steps; and the terms table equals a hand-written projection of the
 * leads, row for row. Runs on PGlite and PostgreSQL (test/api).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AnalyticsService, foldAnalytics, QUERY_TYPES, TERMS_FOLD_BATCH } from '../../src/analytics/index.js';
import type { Db } from '../../src/db/index.js';
import { finishAttempts } from '../../src/lifecycle/finish.js';
import { ADMIN, insertAnalyticsLeads, M1, prng, R1, seedAnalyticsTenants } from '../helpers/analytics.js';
import { createTestDb } from '../helpers/db.js';

let db: Db;
const live = () => new AnalyticsService(db, { source: 'live' });
const terms = () => new AnalyticsService(db, { source: 'terms' });
const auto = () => new AnalyticsService(db);

const random = prng(7);
const pick = <T>(values: readonly T[]): T => values[Math.floor(random() * values.length)]!;

const LONG = 'x'.repeat(300);
const LONG_KEY = 'k'.repeat(140);
/** JSON text of payload values, as written (1.0 and 1e0 kept as typed: they are the number 1). */
const CAMPAIGNS = ['"spring"', '"autumn"', '"1"', '1', '1.0', '1e0', '2.50', 'true', 'false', 'null', '["spring"]', '{"name": "spring"}', `"${LONG}"`];
const BASE_MS = Date.parse('2024-05-01T00:00:00Z');
let seq = 0;

/** A random lead of any status; its payload is JSON text. */
function randomLead() {
  seq++;
  const reseller = random() < 0.8 ? 'r1' : 'r2';
  const status = pick(['BACKLOG', 'PROCESSING', 'RETRY', 'FINISHED', 'FINISHED']);
  const attempts = status === 'BACKLOG' ? 0 : pick([0, 1, 2, 3]);
  const at = BASE_MS + Math.floor(random() * 4 * 24) * 3_600_000 + Math.floor(random() * 3_600_000);
  const dialled = attempts > 0;
  const fields = [`"campaign": ${pick(CAMPAIGNS)}`, `"lang": ${pick(['"en"', '"es"', '"hi"'])}`];
  if (random() < 0.7) fields.push(`"tier": ${pick(['1', '2', '"1"', 'true', 'null'])}`);
  if (random() < 0.2) fields.push(`"${LONG_KEY}": "v"`);
  if (random() < 0.3) fields.push(`"phone": "+1555${String(Math.floor(random() * 1e7)).padStart(7, '0')}"`);
  return {
    id: `lead-${seq}`,
    reseller,
    merchant: reseller === 'r1' ? pick(['m1', 'm1b', null]) : pick(['m2', null]),
    template: reseller === 'r1' ? pick(['t1', 't2']) : 't3',
    status,
    outcome: status === 'FINISHED' ? pick(['confirmed', 'no_answer', 'busy', 'rescheduled', 'aborted']) : null,
    attempts,
    callAt: dialled ? new Date(at).toISOString() : null,
    createdAt: new Date(at - Math.floor(random() * 7_200_000)).toISOString(),
    duration: dialled ? pick([null, 0, 15, 60, 61, 300]) : null,
    sentiment: dialled ? pick([null, 0.2, 0.4, 0.6, 0.8]) : null,
    provider: dialled ? pick(['PROVIDER_A', 'PROVIDER_B', null]) : null,
    playground: random() < 0.05,
    mode: pick(['TELEPHONY', 'TELEPHONY', 'WEBRTC', 'TELEPHONY_TEST']),
    payload: random() < 0.03 ? pick(['[]', '"text"', '{}']) : `{${fields.join(', ')}}`,
  };
}
type Lead = ReturnType<typeof randomLead>;

async function insertLeads(leads: Lead[]): Promise<void> {
  await insertAnalyticsLeads(db, leads);
}

/** Payload filters the terms answer (every one of these keys and values is stored). */
const STORED_FILTERS: Record<string, unknown>[] = [
  { campaign: 'spring' },
  { campaign: '1' },
  { campaign: 1 },
  { campaign: 2.5 },
  { campaign: true },
  { campaign: null },
  { campaign: 'spring', lang: 'en' },
  { lang: 'es', campaign: 1, tier: 1 },
  { tier: '1', lang: 'hi' },
  { phone: '+15550000000' },
  { missing: 'x' },
];
/** Filters the terms do not hold: the leads answer them. */
const UNSTORED_FILTERS: Record<string, unknown>[] = [{ campaign: LONG }, { [LONG_KEY]: 'v' }, { lang: 'en', [LONG_KEY]: 'v' }];

const OTHER_FILTERS: Record<string, unknown>[] = [
  {},
  { date_from: '2024-05-02', date_to: '2024-05-03' },
  { date_from: '2024-05-02T06:30:00Z', date_to: '2024-05-03T10:00:00Z' },
  { merchant_id: 'm1', template_id: 't1' },
  { min_duration: 1, max_duration: 100 },
  { sentiment_min: 0.4, sentiment_max: 0.6 },
];

function bodies(payloads: Record<string, unknown>[], others = OTHER_FILTERS) {
  const out: Record<string, any>[] = [];
  for (const query_type of QUERY_TYPES) {
    for (const payload_filters of payloads) {
      for (const other of others) out.push({ query_type, page_size: 1000, filters: { ...other, payload_filters } });
    }
    const [first] = payloads;
    out.push({ query_type, timezone: 'Asia/Kolkata', granularity: 'hour', by_weekday: true, filters: { payload_filters: first } });
    out.push({ query_type, granularity: 'week', page: 2, page_size: 2, filters: { payload_filters: first } });
    out.push({ query_type, calls_only: true, filters: { payload_filters: first } });
    out.push({ query_type, calls_only: true, granularity: 'hour', filters: { date_from: '2024-05-02', date_to: '2024-05-03', payload_filters: first } });
  }
  return out;
}

/** Every scope: the platform, a reseller, a merchant. */
const ALL_CALLERS = [ADMIN, R1, M1];

/**
 * The terms answer exactly what the leads do, for `callers` (a reseller's scope unless a change
 * moved leads between tenants); filters they do not hold go to the leads.
 */
async function assertTermsMatchLeads(label: string, others = OTHER_FILTERS, callers = [R1]): Promise<void> {
  for (const caller of callers) {
    // The reseller's scope with every filter; the platform's and a merchant's with the first two
    // (no filter, a date range): the scope is what differs between them.
    for (const body of bodies(STORED_FILTERS, caller === R1 ? others : others.slice(0, 2))) {
      const what = `${label}: ${caller.role} ${JSON.stringify(body)}`;
      const expected = await live().query(caller, body as any);
      assert.deepEqual(await terms().query(caller, body as any), expected, what);
      // The default source takes the terms for every stored payload filter, whatever the other
      // filters: asked with each payload filter alone (and the extra requests), it is the terms'
      // same query for the rest.
      if (Object.keys(body.filters).length === 1) assert.deepEqual(await auto().query(caller, body as any), expected, what);
    }
    for (const body of bodies(UNSTORED_FILTERS, [{}])) {
      const what = `${label}: ${caller.role} ${JSON.stringify(body)}`;
      await assert.rejects(terms().query(caller, body as any), /cannot answer/, what);
      assert.deepEqual(await auto().query(caller, body as any), await live().query(caller, body as any), what);
    }
  }
}

/**
 * The terms table is exactly the stored terms of the live leads, written here by hand; every lead not
 * pending has its facts as they are now in its terms. After a fold, no lead is pending.
 */
async function assertTermsTableExact(label: string): Promise<void> {
  const expected = await db.query(
    `SELECT e.key, CASE WHEN jsonb_typeof(e.value) = 'number' THEN to_jsonb(trim_scale(e.value::numeric)) ELSE e.value END AS value, l.lead_no
     FROM leads l, jsonb_each(CASE WHEN jsonb_typeof(l.payload) = 'object' THEN l.payload END) AS e
     WHERE NOT l.is_playground AND l.execution_mode NOT IN ('TELEPHONY_TEST', 'WEBRTC_TEST') AND octet_length(e.key) <= 128
       AND jsonb_typeof(e.value) IN ('string', 'number', 'boolean', 'null') AND (jsonb_typeof(e.value) <> 'string' OR octet_length(e.value #>> '{}') <= 256)
     ORDER BY lead_no, key`,
  );
  const actual = await db.query(`SELECT key, value, lead_no FROM lead_payload_terms ORDER BY lead_no, key`);
  assert.deepEqual(actual.rows, expected.rows, `${label}: lead_payload_terms`);
  const stale = await db.query(
    `SELECT t.lead_no, t.key FROM lead_payload_terms t JOIN leads l ON l.lead_no = t.lead_no LEFT JOIN lead_owners o ON o.owner_no = t.owner_no
     WHERE t.lead_no NOT IN (SELECT lead_no FROM lead_terms_pending)
       AND (o.reseller_id, nullif(o.merchant_id, ''), o.template_id, t.activity_at, t.attempt_count, t.duration_seconds, t.sentiment, t.status, t.outcome, t.provider)
           IS DISTINCT FROM
           (l.reseller_id, l.merchant_id, l.template_id, coalesce(l.call_initiated_time, l.created_at), l.attempt_count, l.duration_seconds, l.sentiment, l.status, l.outcome, l.provider)`,
  );
  assert.deepEqual(stale.rows, [], `${label}: terms whose facts are not the lead's, and the lead not pending`);
}

const pendingLeads = async () => (await db.query<{ n: number }>('SELECT count(DISTINCT lead_no)::int AS n FROM lead_payload_terms WHERE lead_no IN (SELECT lead_no FROM lead_terms_pending)')).rows[0]!.n;

/** Exact with leads pending; then folded: nothing pending, and exact with the facts from the terms. */
async function assertExactBeforeAndAfterFold(label: string, others = OTHER_FILTERS, afterFold = OTHER_FILTERS.slice(0, 2), callers = [R1]): Promise<void> {
  await assertTermsTableExact(label);
  await assertTermsMatchLeads(label, others, callers);
  const fold = await foldAnalytics(db);
  assert.equal(fold.folded, true);
  assert.equal(await pendingLeads(), 0, `${label}: no lead pending after a fold`);
  assert.equal((await db.query<{ n: number }>('SELECT count(*)::int AS n FROM lead_terms_pending')).rows[0]!.n, 0);
  await assertTermsTableExact(`${label}, folded`);
  await assertTermsMatchLeads(`${label}, folded`, afterFold);
}

before(async () => {
  db = await createTestDb();
  await seedAnalyticsTenants(db);
});
after(() => db.close());

describe('analytics payload terms: exact for every filter after every kind of change', () => {
  it('inserts (one statement of many leads, and single ones)', async () => {
    await insertLeads(Array.from({ length: 300 }, randomLead));
    for (let i = 0; i < 5; i++) await insertLeads([randomLead()]);
    // A phone number the filters ask for, on a live lead.
    await insertLeads([{ ...randomLead(), playground: false, mode: 'TELEPHONY', payload: '{"phone": "+15550000000", "campaign": "spring"}' }]);
    await assertTermsTableExact('inserted');
    await assertTermsMatchLeads('inserted', OTHER_FILTERS, ALL_CALLERS);
  });

  it('updates: claims, finishes, payload edits, test flags, tenants; updates touching none of it', async () => {
    await db.query(`UPDATE leads SET status = 'PROCESSING', attempt_count = attempt_count + 1, call_initiated_time = '2024-05-03T12:34:56Z'
                    WHERE id IN (SELECT id FROM leads WHERE status = 'BACKLOG' ORDER BY id LIMIT 15)`);
    await db.query(`UPDATE leads SET status = 'FINISHED', outcome = 'confirmed', duration_seconds = 42, sentiment = 0.9, provider = 'PROVIDER_B'
                    WHERE id IN (SELECT id FROM leads WHERE status = 'PROCESSING' ORDER BY id LIMIT 8)`);
    await db.query(`UPDATE leads SET payload = payload || '{"campaign": "autumn", "tier": 1.00}' WHERE jsonb_typeof(payload) = 'object' AND id LIKE '%3'`);
    await db.query(`UPDATE leads SET payload = payload - 'lang' WHERE jsonb_typeof(payload) = 'object' AND id LIKE '%4'`);
    await db.query(`UPDATE leads SET payload = '{"campaign": "spring"}' WHERE jsonb_typeof(payload) <> 'object'`);
    await db.query(`UPDATE leads SET is_playground = NOT is_playground WHERE id LIKE '%5'`);
    await db.query(`UPDATE leads SET execution_mode = 'TELEPHONY' WHERE execution_mode = 'TELEPHONY_TEST' AND id LIKE '%2'`);
    await db.query(`UPDATE leads SET merchant_id = NULL WHERE merchant_id = 'm1b' AND id LIKE '%1'`);
    await db.query(`UPDATE leads SET reseller_id = 'r2', merchant_id = 'm2', template_id = 't3' WHERE reseller_id = 'r1' AND id LIKE '%6'`);
    await db.query(`UPDATE leads SET id = id || '-renamed' WHERE id LIKE '%8'`);
    await db.query(`UPDATE leads SET locked_until = now(), meta_data = '{"x": 1}'`); // touches nothing the terms hold
    await assertExactBeforeAndAfterFold('updated', OTHER_FILTERS, OTHER_FILTERS.slice(0, 2), ALL_CALLERS);
  });

  it('deletes', async () => {
    await db.query(`DELETE FROM leads WHERE id LIKE '%9' OR id LIKE '%7'`);
    await assertExactBeforeAndAfterFold('deleted', OTHER_FILTERS.slice(0, 2));
  });

  it("the scheduler's finish statement (finishAttempts) moves the terms with the lead", async () => {
    const leads = Array.from({ length: 4 }, () => ({ ...randomLead(), reseller: 'r1', merchant: 'm1', template: 't1', status: 'PROCESSING', attempts: 1, outcome: null, duration: null, sentiment: null, playground: false, mode: 'TELEPHONY', payload: '{"campaign": "spring", "lang": "en"}' }));
    await insertLeads(leads);
    await db.query(`UPDATE leads SET locked_by = 'w1', locked_until = now() + interval '1 minute' WHERE id = ANY($1::text[])`, [leads.map((l) => l.id)]);
    const ends = [{ kind: 'completed', outcome: 'confirmed', durationSeconds: 42, sentiment: 0.7 }, { kind: 'no_answer' }, { kind: 'busy' }, { kind: 'error', error: 'down' }] as const;
    await db.tx((q) =>
      finishAttempts(q, leads.map((l, i) => ({ leadId: l.id, workerId: 'w1', attempt: 1, config: { max_retry: i % 2, retry_offset: 60 }, result: { end: ends[i]! } })), async () => {}),
    );
    await assertExactBeforeAndAfterFold('finished by the scheduler', OTHER_FILTERS.slice(0, 2));
  });

  it('random steps (inserts, updates of any fact or the payload, deletes): the terms agree with the leads after each', async () => {
    const steps = [
      async () => insertLeads(Array.from({ length: 1 + Math.floor(random() * 15) }, randomLead)),
      async () => db.query(`UPDATE leads SET duration_seconds = $1, sentiment = $2 WHERE id IN (SELECT id FROM leads ORDER BY md5(id || $3) LIMIT 5)`, [pick([null, 0, 77]), pick([null, 0.4, 0.95]), String(random())]),
      async () => db.query(`UPDATE leads SET status = $1, outcome = $2 WHERE id IN (SELECT id FROM leads ORDER BY md5(id || $3) LIMIT 5)`, [pick(['RETRY', 'FINISHED', 'PROCESSING']), pick([null, 'confirmed', 'busy']), String(random())]),
      async () => db.query(`UPDATE leads SET call_initiated_time = coalesce(call_initiated_time, created_at) + interval '1 hour' * $1 WHERE id IN (SELECT id FROM leads ORDER BY md5(id || $2) LIMIT 5)`, [pick([-30, 1, 5]), String(random())]),
      async () => db.query(`UPDATE leads SET payload = $1::jsonb WHERE id IN (SELECT id FROM leads ORDER BY md5(id || $2) LIMIT 4)`, [`{"campaign": ${pick(CAMPAIGNS)}, "lang": "en", "tier": ${pick(['1', '"1"', 'null'])}}`, String(random())]),
      async () => db.query(`UPDATE leads SET is_playground = NOT is_playground WHERE id IN (SELECT id FROM leads ORDER BY md5(id || $1) LIMIT 3)`, [String(random())]),
      async () => db.query(`DELETE FROM leads WHERE id IN (SELECT id FROM leads ORDER BY md5(id || $1) LIMIT 4)`, [String(random())]),
      async () => db.query(`UPDATE leads SET template_id = $1 WHERE reseller_id = 'r1' AND id IN (SELECT id FROM leads ORDER BY md5(id || $2) LIMIT 3)`, [pick(['t1', 't2']), String(random())]),
      async () => foldAnalytics(db),
    ];
    const checked = QUERY_TYPES.flatMap((query_type) =>
      [{ campaign: 1 }, { campaign: 'spring', lang: 'en' }, { tier: '1' }].map((payload_filters) => ({ query_type, page_size: 1000, filters: { payload_filters } })),
    );
    for (let step = 0; step < 20; step++) {
      await steps[Math.floor(random() * steps.length)]!();
      for (const body of checked) {
        assert.deepEqual(await terms().query(R1, body as any), await live().query(R1, body as any), `step ${step}: ${JSON.stringify(body)}`);
      }
    }
    await assertExactBeforeAndAfterFold('after random steps', OTHER_FILTERS.slice(0, 3), OTHER_FILTERS.slice(0, 2), ALL_CALLERS);
  });

  it('concurrent writers claiming, finishing and editing payloads beside two folders: no deadlock, still exact', async () => {
    if (db.kind !== 'postgres') return; // PGlite runs one statement at a time.
    const leads = Array.from({ length: 40 }, () => ({ ...randomLead(), reseller: 'r1', merchant: 'm1', template: 't1', status: 'BACKLOG', attempts: 0, outcome: null, callAt: null, duration: null, playground: false, mode: 'TELEPHONY', payload: '{"campaign": "spring", "lang": "en"}' }));
    await insertLeads(leads);
    const ids = leads.map((l) => l.id);
    const writer = (w: number) =>
      db.tx(async (q) => {
        const mine = ids.filter((_, i) => i % 8 === w);
        const order = w % 2 === 0 ? mine : [...mine].reverse();
        for (const id of order) await q.query(`UPDATE leads SET status = 'PROCESSING', attempt_count = attempt_count + 1, call_initiated_time = now() WHERE id = $1`, [id]);
        for (const id of order) await q.query(`UPDATE leads SET status = 'FINISHED', outcome = 'confirmed', duration_seconds = $2 WHERE id = $1`, [id, 10 + w]);
      });
    // Leads of their own, dialled (so pending), then their payload edited in a transaction held open:
    // the edit holds the lead's term rows, which the folders skip and leave pending, never wait for.
    const edited = Array.from({ length: 8 }, () => ({ ...leads[0]!, id: `edited-${++seq}` }));
    await insertLeads(edited);
    const editor = (e: number) =>
      (async () => {
        for (const lead of edited.filter((_, i) => i % 2 === e)) {
          await db.query(`UPDATE leads SET status = 'PROCESSING', attempt_count = 1, call_initiated_time = now() WHERE id = $1`, [lead.id]);
          await db.tx(async (q) => {
            await q.query(`UPDATE leads SET payload = payload || $2::jsonb WHERE id = $1`, [lead.id, JSON.stringify({ lang: e === 0 ? 'es' : 'hi' })]);
            await new Promise((resolve) => setTimeout(resolve, 30));
          });
        }
      })();
    let writing = true;
    const folder = async () => {
      while (writing) await foldAnalytics(db);
    };
    const folders = [folder(), folder()];
    try {
      await Promise.all([...Array.from({ length: 8 }, (_, w) => writer(w)), editor(0), editor(1)]);
    } finally {
      writing = false;
      await Promise.all(folders);
    }
    await assertExactBeforeAndAfterFold('after concurrent writers', OTHER_FILTERS.slice(0, 1), OTHER_FILTERS.slice(0, 1));
  });

  it('a fold skips the terms a payload edit holds, leaves that lead pending and answers exact; the next fold rewrites it', async () => {
    if (db.kind !== 'postgres') return; // PGlite runs one transaction at a time.
    await foldAnalytics(db);
    const lead = { ...randomLead(), id: `held-${++seq}`, reseller: 'r1', merchant: 'm1', template: 't1', status: 'BACKLOG', attempts: 0, outcome: null, callAt: null, duration: null, playground: false, mode: 'TELEPHONY', payload: '{"campaign": "spring", "lang": "en"}' };
    await insertLeads([lead]);
    await db.query(`UPDATE leads SET status = 'PROCESSING', attempt_count = 1, call_initiated_time = now() WHERE id = $1`, [lead.id]);
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let editing!: () => void;
    const edited = new Promise<void>((resolve) => (editing = resolve));
    const edit = db.tx(async (q) => {
      await q.query(`UPDATE leads SET payload = payload || '{"lang": "es"}' WHERE id = $1`, [lead.id]);
      editing();
      await released;
    });
    await edited;
    try {
      const fold = await foldAnalytics(db);
      assert.equal(fold.folded, true);
      assert.ok(fold.terms >= 1);
      assert.equal(await pendingLeads(), 1, 'the held lead stays pending');
      await assertTermsTableExact('a payload edit in progress');
      const body = { query_type: 'status_distribution', filters: { payload_filters: { campaign: 'spring', lang: 'en' } } };
      assert.deepEqual(await terms().query(R1, body as any), await live().query(R1, body as any));
    } finally {
      release();
      await edit;
    }
    await assertExactBeforeAndAfterFold('the payload edit committed', OTHER_FILTERS.slice(0, 1), OTHER_FILTERS.slice(0, 1));
  });

  it('a backlog larger than one round is folded in rounds, each saying whether more may wait', async () => {
    await foldAnalytics(db);
    const leads = Array.from({ length: TERMS_FOLD_BATCH + 300 }, () => ({ ...randomLead(), id: `backlog-${++seq}`, reseller: 'r1', merchant: 'm1', template: 't1', status: 'BACKLOG', attempts: 0, outcome: null, callAt: null, duration: null, playground: false, mode: 'TELEPHONY', payload: '{"campaign": "spring", "lang": "en"}' }));
    await insertLeads(leads);
    await db.query(`UPDATE leads SET status = 'PROCESSING', attempt_count = 1, call_initiated_time = '2024-05-02T10:00:00Z' WHERE id LIKE 'backlog-%'`);
    assert.equal(await pendingLeads(), TERMS_FOLD_BATCH + 300);
    const first = await foldAnalytics(db);
    assert.deepEqual([first.terms, first.more], [TERMS_FOLD_BATCH, true]);
    assert.equal(await pendingLeads(), 300);
    await assertTermsTableExact('a backlog, one round folded');
    const body = { query_type: 'status_distribution', filters: { payload_filters: { campaign: 'spring' } } };
    assert.deepEqual(await terms().query(R1, body as any), await live().query(R1, body as any));
    const second = await foldAnalytics(db);
    assert.deepEqual([second.terms, second.more], [300, false]);
    assert.equal(await pendingLeads(), 0);
    await assertTermsTableExact('a backlog folded');
    assert.deepEqual(await terms().query(R1, body as any), await live().query(R1, body as any));
  });
});
