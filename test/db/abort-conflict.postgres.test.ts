/**
 * An abort crossing another transaction on PostgreSQL: the abort locks many leads in one
 * statement, and another transaction that locks two of them in the other order makes a deadlock.
 * PostgreSQL breaks it by rolling the abort back; the abort runs again once the other has
 * committed, so the caller is told the leads were aborted, not that the database failed.
 */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import type { Db } from '../../src/db/index.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { createTestDb } from '../helpers/db.js';
import { gate } from '../helpers/drivers.js';
import { buildWorld, type World } from '../helpers/world.js';

let db: Db;
let t: TestApp;
let w: World;

before(async () => {
  db = await createTestDb('postgres');
  t = await buildTestApp({ db });
  w = await buildWorld(t);
});
after(() => t.close());

async function waitingForLock(text: string): Promise<void> {
  for (let i = 0; i < 500; i++) {
    const { rows } = await db.query(`SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE $1`, [`%${text}%`]);
    if (rows.length > 0) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`no statement like ${text} waited for a lock`);
}

it('aborts leads after PostgreSQL broke a deadlock between the abort and another transaction by rolling the abort back', async () => {
  const tpl = await w.reseller1.post('/templates', {
    name: 'abort-conflict',
    reseller_id: w.r1,
    flow: { initial_node: 'a', nodes: [{ node_name: 'a', task_messages: [{ role: 'system', content: 'Hi' }] }] },
  });
  assert.equal(tpl.status, 200, JSON.stringify(tpl.body));
  const leads: string[] = [];
  for (let i = 0; i < 2; i++) {
    const res = await w.reseller1.post('/leads', { request_id: `abort-conflict-${i}`, template: 'abort-conflict', reseller_id: w.r1, reporting_webhook_url: 'https://crm.example.com/hook', payload: { customer_mobile_number: `+1646555071${i}` } });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    leads.push(res.body.lead_call_tracker_id);
  }
  const [first, second] = leads as [string, string];

  // The other transaction locks the second lead; the abort locks the first and waits for the
  // second; then the other transaction asks for the first: each waits for the other.
  // PostgreSQL rolls back whichever backend runs its deadlock check first, a deadlock_timeout
  // after it began to wait. The abort waits first, but on a busy machine its check can run late,
  // after the other's: so the other transaction checks only after a minute (a superuser setting;
  // the test server's role is one).
  const { rows: roles } = await db.query<{ rolsuper: boolean }>('SELECT rolsuper FROM pg_roles WHERE rolname = current_user');
  assert.equal(roles[0]?.rolsuper, true, 'the deadlock case needs a superuser role to set deadlock_timeout for one transaction');
  const locked = gate();
  const crossed = gate();
  const other = db.tx(async (q) => {
    await q.query(`SET LOCAL deadlock_timeout = '1min'`);
    await q.query(`UPDATE leads SET updated_at = now() WHERE id = $1`, [second]);
    locked.open();
    await crossed.wait;
    await q.query(`UPDATE leads SET updated_at = now() WHERE id = $1`, [first]);
  });
  await locked.wait;
  const abort = w.reseller1.post('/lead/abort', { leads: [first, second].map((lead_id) => ({ lead_id, cancellation_reason: 'crossed' })) });
  await waitingForLock('jsonb_to_recordset');
  crossed.open();
  await other;

  const res = await abort;
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.deepEqual(
    res.body.leads.map((l: { id: string; status: string }) => [l.id, l.status]),
    [
      [first, 'success'],
      [second, 'success'],
    ],
    JSON.stringify(res.body),
  );
  const { rows } = await db.query<{ status: string; outcome: string; cancellation_reason: string }>(
    'SELECT status, outcome, cancellation_reason FROM leads WHERE id = ANY ($1::text[])',
    [leads],
  );
  assert.deepEqual(rows, [
    { status: 'FINISHED', outcome: 'aborted', cancellation_reason: 'crossed' },
    { status: 'FINISHED', outcome: 'aborted', cancellation_reason: 'crossed' },
  ]);
  // The first run was rolled back whole: one failure report per lead, not two.
  const reports = await db.query<{ lead_id: string; kind: string }>(`SELECT lead_id, kind FROM webhook_deliveries WHERE lead_id = ANY ($1::text[]) ORDER BY lead_id`, [leads]);
  assert.deepEqual(reports.rows, [...leads].sort().map((lead_id) => ({ lead_id, kind: 'failure' })));
});
