/**
 * The statements that create lead rows outside a call: pushed leads, queued (BACKLOG), and finished
 * leads written whole (demo data). An inbound call's lead is created as its call is answered, with
 * the claims (`openInbound`).
 */
import type { Queryable } from '../db/index.js';
import { LEADS_CHANNEL, type FinishedLeadRow, type NewLead } from './types.js';

/**
 * Queues pushed leads in one statement (one round trip, all or nothing), each due `due_in_seconds`
 * after its creation; idle schedulers are woken when some lead is due at once (the NOTIFY is
 * delivered on commit, so never before the rows are visible).
 */
export async function queueLeads(q: Queryable, leads: readonly NewLead[]): Promise<void> {
  if (leads.length === 0) return;
  await q.query(
    `WITH inserted AS (
       INSERT INTO leads (id, reseller_id, merchant_id, template_id, template_name, request_id, execution_mode,
                          is_playground, configurations_override, payload, next_attempt_at, campaign_id, consent)
       SELECT x.id, x.reseller_id, x.merchant_id, x.template_id, x.template_name, x.request_id, x.execution_mode,
              x.is_playground, x.configurations_override, x.payload,
              CASE WHEN x.due_in_seconds IS NULL THEN NULL ELSE now() + x.due_in_seconds * interval '1 second' END, x.campaign_id, x.consent
       FROM jsonb_to_recordset($1::jsonb) AS x (
         id text, reseller_id text, merchant_id text, template_id text, template_name text, request_id text,
         execution_mode text, is_playground boolean, configurations_override jsonb, payload jsonb, due_in_seconds integer, campaign_id text, consent jsonb)
       RETURNING 1)
     SELECT (SELECT count(*) FROM inserted) AS n, CASE WHEN $2 THEN pg_notify('${LEADS_CHANNEL}', '') END AS notified`,
    [JSON.stringify(leads), leads.some((l) => l.due_in_seconds === 0)],
    { prepare: true },
  );
}

const isoOrNull = (d: Date | null) => (d === null ? null : d.toISOString());

/**
 * Writes finished leads as the finish of their last attempt leaves them (status FINISHED with the
 * outcome, attempt count, call times, duration, cost, sentiment, provider), at the times they carry
 * rather than now(), and without call_attempts history: a million demo leads spread over past days
 * in batches of thousands. One statement per batch (one array per column, unnested: one round trip
 * and a fixed number of parameters). Analytics count them as any other lead: the rollup is kept by
 * the trigger on leads, which fires for these INSERTs as for a finish's UPDATEs. Returns the
 * number of rows written.
 */
export async function insertFinishedLeads(q: Queryable, rows: readonly FinishedLeadRow[]): Promise<number> {
  if (rows.length === 0) return 0;
  const column = <T>(pick: (row: FinishedLeadRow) => T) => rows.map(pick);
  const { rowCount } = await q.query(
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
