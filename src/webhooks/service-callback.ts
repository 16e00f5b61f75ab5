/**
 * The service callback: when the voice pipeline finishes a conversation, its final state
 * goes to the endpoint of the lead's configuration (`service_callback_url`), else the deployment's
 * (DIALER_SERVICE_CALLBACK_URL). It is queued in the transaction that finishes the lead and
 * delivered, signed and retried, by the same dispatcher as the reporting webhook.
 */
import type { Queryable } from '../db/index.js';
import { newId } from '../lib/ids.js';
import { extras } from './payload.js';
import { WebhooksRepository, type ConversationLead, type NewDelivery, type NotifiableLead } from './repository.js';


const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);

/** The callback's body: camelCase, like the reporting webhook. */
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
    ...extras(lead),
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
  const repo = new WebhooksRepository(q);
  const queued = serviceCallbackDeliveries(await repo.notifiable(leadIds, deploymentUrl !== undefined), deploymentUrl);
  await repo.insert(queued);
  return queued.length;
}

/** The service callbacks of these finished leads (after a conversation, to the configuration's endpoint or the deployment's). */
export function serviceCallbackDeliveries(leads: readonly NotifiableLead[], deploymentUrl: string | undefined): NewDelivery[] {
  return leads.flatMap((lead) => {
    const url = lead.callback_url ?? deploymentUrl;
    return lead.conversation && url ? [{ id: newId(), lead_id: lead.id, url, kind: 'service_callback' as const, payload: serviceCallbackPayload(lead) }] : [];
  });
}
