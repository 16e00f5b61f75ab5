/**
 * Inbound calls: someone dials one of our numbers. The configuration that answers is the one of
 * the last lead we called that person from that number (a call back); failing that, the most
 * recently changed configuration with `enable_inbound`. Inside its inbound window the agent
 * answers on a new lead (`call_direction` INBOUND); outside it, or with inbound disabled, the
 * block message is spoken and the call redirected (REDIRECT) or ended (REJECT, MESSAGE; HANGUP
 * ends it without a word).
 */
import type { Db, Queryable } from '../db/index.js';
import { notFound } from '../lib/errors.js';
import { newId } from '../lib/ids.js';
import { inWindow } from '../scheduler/index.js';
import { startCallSpan } from '../tracing/index.js';
import type { CallEnd } from './driver.js';
import type { AnswerInfo, Markup, ProviderKit } from './provider.js';
import type { Telephony } from './service.js';

interface InboundConfig {
  reseller_id: string;
  merchant_id: string | null;
  template_id: string;
  template_name: string;
  enable_inbound: boolean;
  inbound_call_start_time: string | null;
  inbound_call_end_time: string | null;
  inbound_call_timezone: string | null;
  inbound_block_action: string | null;
  inbound_redirect_number: string | null;
  inbound_block_message: string | null;
  number_id: string;
}

const CONFIG_COLUMNS = `c.reseller_id, t.merchant_id, c.template_id, t.name AS template_name, c.enable_inbound, c.inbound_call_start_time,
  c.inbound_call_end_time, c.inbound_call_timezone, c.inbound_block_action, c.inbound_redirect_number, c.inbound_block_message`;

async function findConfig(db: Db, ourNumber: string, caller: string): Promise<InboundConfig | undefined | 'unknown_number'> {
  const { rows: numbers } = await db.query<{ id: string }>('SELECT id FROM outbound_numbers WHERE phone_number = $1', [ourNumber]);
  const number = numbers[0];
  if (!number) return 'unknown_number';
  const callBack = await db.query<InboundConfig>(
    `SELECT ${CONFIG_COLUMNS}, $1::text AS number_id
       FROM leads l JOIN configurations c ON c.reseller_id = l.reseller_id AND c.template_id = l.template_id
       JOIN templates t ON t.id = c.template_id
      WHERE l.outbound_number_id = $1 AND l.payload->>'customer_mobile_number' = $2
      ORDER BY l.created_at DESC LIMIT 1`,
    [number.id, caller],
  );
  if (callBack.rows[0]) return callBack.rows[0];
  const anyInbound = await db.query<InboundConfig>(
    `SELECT ${CONFIG_COLUMNS}, $1::text AS number_id FROM configurations c JOIN templates t ON t.id = c.template_id
      WHERE c.enable_inbound ORDER BY c.updated_at DESC LIMIT 1`,
    [number.id],
  );
  return anyInbound.rows[0];
}

/** Records an inbound call's end like an outbound attempt's, and queues its notifications in the same transaction. */
async function finishInbound(
  db: Db,
  leadId: string,
  end: CallEnd,
  traceId: string | undefined,
  onFinished: ((q: Queryable, leadIds: readonly string[]) => Promise<void>) | undefined,
): Promise<void> {
  const outcome = end.kind === 'completed' ? (end.outcome ?? 'completed') : end.kind;
  const completed = end.kind === 'completed' ? end : undefined;
  const meta = completed?.metaData ?? (end.kind !== 'completed' && end.error ? { errors: [end.error] } : {});
  await db.tx(async (q) => {
    await q.query(
      `UPDATE leads SET status = 'FINISHED', outcome = $2, call_end_time = now(), duration_seconds = $3, recording_url = $4,
              meta_data = meta_data || $5::jsonb, trace_scores = trace_scores || $6::jsonb, sentiment = $7, cost = $8, updated_at = now()
        WHERE id = $1`,
      [
        leadId,
        outcome,
        end.kind === 'error' ? null : (end.durationSeconds ?? null),
        completed?.recordingUrl ?? null,
        JSON.stringify(traceId ? { ...meta, trace_id: traceId } : meta),
        JSON.stringify(completed?.traceScores ?? {}),
        completed?.sentiment ?? null,
        completed?.cost ?? null,
      ],
    );
    await q.query(`UPDATE call_attempts SET status = 'ENDED', outcome = $2, ended_at = now() WHERE lead_id = $1 AND attempt = 1`, [leadId, outcome]);
    await onFinished?.(q, [leadId]);
  });
}

export async function handleInbound(deps: { telephony: Telephony; db: Db; kit: ProviderKit; info: AnswerInfo }): Promise<Markup> {
  const { telephony, db, kit, info } = deps;
  // No agent to answer with: say so rather than pick up into silence.
  if (!telephony.status().ready) return kit.blockMarkup({ message: 'Sorry, we cannot take your call right now. Please try again later.' });
  const config = await findConfig(db, info.to, info.from);
  if (config === 'unknown_number') throw notFound(`Number ${info.to}`, 'unknown_number');
  if (!config) return kit.blockMarkup({});
  const start = config.inbound_call_start_time ?? '00:00';
  const end = config.inbound_call_end_time ?? '00:00';
  const open = config.enable_inbound && inWindow(new Date(), start, end, config.inbound_call_timezone ?? 'UTC');
  if (!open) {
    const message = config.inbound_block_message ?? undefined;
    if (config.inbound_block_action === 'REDIRECT' && config.inbound_redirect_number) {
      return kit.blockMarkup({ message, redirectTo: config.inbound_redirect_number, callerId: info.to });
    }
    return kit.blockMarkup({ message: config.inbound_block_action === 'HANGUP' ? undefined : message });
  }
  const leadId = newId();
  const payload = { customer_mobile_number: info.from };
  await db.tx(async (q) => {
    await q.query(
      `INSERT INTO leads (id, reseller_id, merchant_id, template_id, template_name, request_id, status, attempt_count, call_id,
                          call_initiated_time, provider, call_direction, outbound_number_id, payload)
       VALUES ($1, $2, $3, $4, $5, $6, 'PROCESSING', 1, $7, now(), $8, 'INBOUND', $9, $10)`,
      [leadId, config.reseller_id, config.merchant_id, config.template_id, config.template_name, `inbound-${info.callSid}`, info.callSid, kit.slot, config.number_id, JSON.stringify(payload)],
    );
    await q.query(`INSERT INTO call_attempts (id, lead_id, attempt, call_id, provider, outbound_number_id) VALUES ($1, $2, 1, $3, $4, $5)`, [
      newId(),
      leadId,
      info.callSid,
      kit.slot,
      config.number_id,
    ]);
  });
  const callSpan = startCallSpan({ leadId, attempt: 1, requestId: `inbound-${info.callSid}`, template: config.template_name, templateId: config.template_id, provider: kit.slot, direction: 'inbound' });
  callSpan.callId(info.callSid);
  const session = telephony.open(
    kit,
    { leadId, templateId: config.template_id, payload, direction: 'inbound', ourNumber: info.to, theirNumber: info.from, traceContext: callSpan.context },
    info.callSid,
  );
  void session.ended
    .then((callEnd) => {
      callSpan.end({
        callId: info.callSid,
        kind: callEnd.kind,
        outcome: callEnd.kind === 'completed' ? (callEnd.outcome ?? 'completed') : callEnd.kind,
        ...(callEnd.kind !== 'error' && callEnd.durationSeconds !== undefined ? { durationSeconds: callEnd.durationSeconds } : {}),
        ...(callEnd.kind !== 'completed' && callEnd.error ? { error: callEnd.error } : {}),
        ...(callEnd.kind === 'completed' && callEnd.traceScores ? { scores: callEnd.traceScores } : {}),
      });
      return finishInbound(db, leadId, callEnd, callSpan.traceId, telephony.deps.onInboundFinished);
    })
    .catch((err: unknown) => telephony.deps.log.error({ leadId, err }, 'could not finish an inbound lead'));
  return session.answer(info);
}
