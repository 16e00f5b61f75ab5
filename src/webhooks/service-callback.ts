/**
 * The service callback (spec 6.2): when the voice pipeline finishes a conversation, its final state
 * goes to the endpoint of the lead's configuration (`service_callback_url`), else the deployment's
 * (DIALER_SERVICE_CALLBACK_URL). It is queued in the transaction that finishes the lead and
 * delivered, signed and retried, by the same dispatcher as the reporting webhook.
 */
import type { Queryable } from '../db/index.js';
import { newId } from '../lib/ids.js';
import { insertDeliveries } from './payload.js';

interface ConversationLead {
  id: string;
  request_id: string;
  reseller_id: string;
  merchant_id: string | null;
  template_id: string;
  template_name: string;
  execution_mode: string;
  provider: string | null;
  status: string;
  outcome: string | null;
  attempt_count: number;
  call_id: string | null;
  call_initiated_time: Date | null;
  call_end_time: Date | null;
  duration_seconds: number | null;
  recording_url: string | null;
  cost: string | number | null;
  sentiment: number | null;
  trace_scores: Record<string, number>;
  meta_data: Record<string, unknown>;
  callback_url: string | null;
}

const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);

/** The callback's body: camelCase, like the reporting webhook (spec 6.1). */
export function serviceCallbackPayload(lead: ConversationLead): Record<string, unknown> {
  const meta = lead.meta_data;
  const scores = lead.trace_scores ?? {};
  return {
    event: 'conversation.finished',
    leadId: lead.id,
    orderId: lead.request_id,
    callId: lead.call_id,
    attempt: lead.attempt_count,
    resellerId: lead.reseller_id,
    merchantId: lead.merchant_id,
    templateId: lead.template_id,
    template: lead.template_name,
    executionMode: lead.execution_mode,
    provider: lead.provider,
    status: lead.status,
    outcome: lead.outcome ?? 'completed',
    callEndedBy: meta.call_ended_by ?? null,
    transcription: list(meta.transcription),
    nodeTraversal: list(meta.node_traversal),
    functionCalls: list(meta.function_calls),
    errors: list(meta.errors),
    timings: {
      callInitiatedAt: lead.call_initiated_time?.toISOString() ?? null,
      callEndedAt: lead.call_end_time?.toISOString() ?? null,
      durationSeconds: lead.duration_seconds,
      turnLatencyMs: list(meta.turn_latency_ms),
      turnLatencyP50Ms: scores.turn_latency_p50_ms ?? null,
      turnLatencyP95Ms: scores.turn_latency_p95_ms ?? null,
    },
    usage: meta.usage ?? null,
    sentiment: lead.sentiment,
    cost: lead.cost === null ? null : Number(lead.cost),
    traceScores: scores,
    recordingUrl: lead.recording_url,
  };
}

/**
 * Queues the service callback of a lead that just finished, in the caller's transaction, when a
 * conversation took place on its last attempt (the agent left `call_ended_by`) and an endpoint is
 * configured. Returns whether one was queued.
 */
export async function enqueueServiceCallback(q: Queryable, leadId: string, deploymentUrl: string | undefined): Promise<boolean> {
  return (await enqueueServiceCallbacks(q, [leadId], deploymentUrl)) === 1;
}

/** The same for leads that finished together: one read and one insert for all. Returns how many were queued. */
export async function enqueueServiceCallbacks(q: Queryable, leadIds: readonly string[], deploymentUrl: string | undefined): Promise<number> {
  if (leadIds.length === 0) return 0;
  const { rows } = await q.query<ConversationLead>(
    `SELECT l.id, l.request_id, l.reseller_id, l.merchant_id, l.template_id, l.template_name, l.execution_mode, l.provider, l.status,
            l.outcome, l.attempt_count, l.call_id, l.call_initiated_time, l.call_end_time, l.duration_seconds, l.recording_url,
            l.cost, l.sentiment, l.trace_scores, l.meta_data, c.service_callback_url AS callback_url
     FROM leads l LEFT JOIN configurations c ON c.reseller_id = l.reseller_id AND c.template_id = l.template_id
     WHERE l.id = ANY($1::text[]) AND l.meta_data ? 'call_ended_by' AND (c.service_callback_url IS NOT NULL OR $2::boolean)
     ORDER BY array_position($1::text[], l.id)`,
    [leadIds, deploymentUrl !== undefined],
    { prepare: true },
  );
  const queued = rows.flatMap((lead) => {
    const url = lead.callback_url ?? deploymentUrl;
    return url ? [{ id: newId(), lead_id: lead.id, url, kind: 'service_callback', payload: serviceCallbackPayload(lead) }] : [];
  });
  await insertDeliveries(q, queued);
  return queued.length;
}
