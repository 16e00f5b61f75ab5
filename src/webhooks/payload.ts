import type { Queryable } from '../db/index.js';
import { isReached, reasonOf } from '../lifecycle/index.js';
import { newId } from '../lib/ids.js';
import { WebhooksRepository, type FinishedLead, type NewDelivery, type NotifiableLead } from './repository.js';

/** The reporting webhook's body: the success payload after a conversation, else the failure payload with its reason. */
export function reportingPayload(lead: FinishedLead): { kind: 'success' | 'failure'; body: Record<string, unknown> } {
  const outcome = lead.outcome ?? 'completed';
  if (isReached(outcome)) {
    return {
      kind: 'success',
      body: {
        orderId: lead.request_id,
        leadId: lead.id,
        callSid: lead.call_id,
        outcome,
        status: lead.status,
        attemptCount: lead.attempt_count,
        transcription: Array.isArray(lead.meta_data.transcription) ? lead.meta_data.transcription : [],
        recordingUrl: lead.recording_url,
        completedAt: (lead.call_end_time ?? new Date()).toISOString(),
        ...extras(lead),
      },
    };
  }
  const detail =
    outcome === 'aborted'
      ? lead.cancellation_reason
      : outcome === 'PRECHECK_FAILED'
        ? failedCheck(lead.meta_data.pre_check_results)
        : lastError(lead.meta_data);
  return {
    kind: 'failure',
    body: {
      orderId: lead.request_id,
      leadId: lead.id,
      outcome,
      attemptCount: lead.attempt_count,
      failureReason: detail ? `${reasonOf(outcome) ?? outcome}: ${detail}` : (reasonOf(outcome) ?? outcome),
      ...extras(lead),
    },
  };
}

/**
 * What the call's edges add to both payloads, when they happened: the callee opted out
 * (`optedOut: true`), the post-call analysis (`analysis`), the callback the callee asked for, the
 * warm transfers, the speech-to-text's fallback.
 */
export function extras(lead: Pick<FinishedLead, 'outcome' | 'meta_data'>): Record<string, unknown> {
  const meta = lead.meta_data;
  return {
    ...(lead.outcome === 'OPTED_OUT' ? { optedOut: true } : {}),
    ...(meta.analysis && typeof meta.analysis === 'object' ? { analysis: meta.analysis } : {}),
    ...(meta.callback && typeof meta.callback === 'object' ? { callbackAt: (meta.callback as { at?: unknown }).at ?? null } : {}),
    // Warm transfers (the briefing the human heard and their decision): only on calls that had one.
    ...(Array.isArray(meta.warm_transfers) && meta.warm_transfers.length ? { warmTransfers: meta.warm_transfers.map(warmTransferView) } : {}),
    // The speech-to-text went over to its second service mid-call: the receiver may want to know
    // that the transcript after `at` came from another engine.
    ...(meta.stt_fallback && typeof meta.stt_fallback === 'object' ? { sttFallback: sttFallbackView(meta.stt_fallback as Record<string, unknown>) } : {}),
  };
}

/** The switch to the second speech-to-text service, as the webhooks carry it. */
function sttFallbackView(f: Record<string, unknown>): Record<string, unknown> {
  return { at: f.at ?? null, atMs: f.at_ms ?? null, from: f.from ?? null, to: f.to ?? null, reason: f.reason ?? null };
}

/** A warm transfer as the webhooks carry it (camelCase, like the rest of the payload). */
function warmTransferView(w: Record<string, unknown>): Record<string, unknown> {
  return {
    to: w.to ?? null,
    briefing: w.briefing ?? null,
    briefingSource: w.briefing_source ?? null,
    decision: w.decision ?? null,
    decidedBy: w.via ?? null,
    heard: w.heard ?? null,
    callbackAt: w.callback_at ?? null,
    events: Array.isArray(w.events) ? w.events : [],
  };
}

function failedCheck(results: unknown): string | undefined {
  if (!Array.isArray(results)) return undefined;
  const r = results.find((x: { action?: string }) => x?.action === 'skip') as { name?: string; result?: string; error?: string } | undefined;
  return r ? `${r.name} ${r.result === 'failed' ? 'said no' : `could not be checked (${r.error ?? 'error'})`}` : undefined;
}

function lastError(meta: Record<string, unknown>): string | undefined {
  const last = meta.last_error as { message?: unknown } | undefined;
  if (last && typeof last.message === 'string') return last.message;
  const errors = meta.errors;
  if (Array.isArray(errors) && errors[0] && typeof (errors[0] as { message?: unknown }).message === 'string') return (errors[0] as { message: string }).message;
  return undefined;
}

/**
 * Queues the reporting webhook of a lead that just finished, in the caller's transaction (so it is
 * queued exactly when the lead finishes, and never lost). Nothing when the lead has no URL.
 */
export async function enqueueReportingWebhook(q: Queryable, leadId: string): Promise<boolean> {
  return (await enqueueReportingWebhooks(q, [leadId])) === 1;
}

/**
 * The same for leads that finished together (a worker's batch of calls): one read and one insert
 * for all of them, however many. Returns how many were queued.
 */
export async function enqueueReportingWebhooks(q: Queryable, leadIds: readonly string[]): Promise<number> {
  if (leadIds.length === 0) return 0;
  const repo = new WebhooksRepository(q);
  const queued = reportingDeliveries(await repo.notifiable(leadIds, false));
  await repo.insert(queued);
  return queued.length;
}

/** The reporting webhooks of these finished leads (those that asked for one). */
export function reportingDeliveries(leads: readonly NotifiableLead[]): NewDelivery[] {
  return leads.flatMap((lead) => {
    const url = lead.payload.reporting_webhook_url;
    if (!lead.reporting || typeof url !== 'string' || url.length === 0) return [];
    const { kind, body } = reportingPayload(lead);
    return [{ id: newId(), lead_id: lead.id, url, kind, payload: body }];
  });
}

/** What a person said and what was made of it, in a queued or sent payload: removed by erasure. */
const PERSONAL_KEYS = ['transcription', 'functionCalls', 'errors', 'recordingUrl', 'analysis', 'callbackAt', 'warmTransfers'];

/** Erasure: the payloads of these leads' deliveries (sent or not) lose their personal content; returns how many. */
export async function eraseDeliveryPayloads(q: Queryable, leadIds: readonly string[]): Promise<number> {
  if (leadIds.length === 0) return 0;
  const { rows } = await q.query<{ n: number }>(
    `WITH d AS (UPDATE webhook_deliveries SET payload = (payload - $2::text[]) || '{"erased": true}'::jsonb, updated_at = now()
                WHERE lead_id = ANY($1::text[]) RETURNING 1)
     SELECT count(*)::int AS n FROM d`,
    [leadIds, PERSONAL_KEYS],
  );
  return rows[0]?.n ?? 0;
}
