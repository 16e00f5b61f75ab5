/**
 * A person's data on request: what Dialer holds about a number (subject access), and its erasure.
 *
 * Terminology
 * - person: whoever a phone number reaches; everything is found by the number, inside the caller's
 *   scope (an admin's: all, or one reseller's; a reseller's; a merchant's).
 * - personal content: a lead's payload (except its reporting_webhook_url), its transcript and
 *   analysis and what the callee said or keyed (metaData), its consent's text and reference, its
 *   recordings, the live lines of its calls, the same content in webhook payloads.
 * - number hash: what an erased number is kept as (src/lib/phone-hash.ts), in the lead's payload
 *   and on the blacklist, so that an opt-out still refuses a later push for the same number.
 */
import { abortLeads, eraseLeadContent, type ErasedLead, type LeadRow, type OnFinished } from '../lifecycle/index.js';
import { scopeCondition, type Principal } from '../auth/index.js';
import { hashOptOuts } from '../blacklist/index.js';
import type { Db } from '../db/index.js';
import { forgetLiveLines, leadView } from '../leads/index.js';
import { AppError, badRequest, conflict, forbidden, notFound } from '../lib/errors.js';
import { newId } from '../lib/ids.js';
import type { Logger } from '../lib/logger.js';
import { E164_HINT, isE164 } from '../lib/phone.js';
import { isoRequired, iso } from '../lib/time.js';
import type { RecordingStore } from '../recordings/index.js';
import { eraseDeliveryPayloads } from '../webhooks/index.js';
import { PrivacyRepository, type Scoped } from './repository.js';
import type { ErasedLeadReport, ErasureBody, ErasureResult, ExportDocument } from './schema.js';
import { erasures } from './metrics.js';

/** metaData fields that say nothing about the person (how the call ran, which rules applied): kept by erasure. */
const NEUTRAL_META = new Set([
  'agent', 'node_traversal', 'call_ended_by', 'usage', 'turn_taking', 'turn_latency_ms', 'turn_overhead_ms', 'barge_ins', 'trace_id',
  'dnc_list', 'legal_hours_hold', 'recording_expired_at', 'recording_deleted_at', 'transcript_deleted_at', 'sandbox',
]);
/** Payload fields that are the tenant's, not the person's. */
const NEUTRAL_PAYLOAD = new Set(['reporting_webhook_url']);
/** Consent fields kept: how and when it was given and revoked, without the text agreed to or the reference (an IP, a form). */
const NEUTRAL_CONSENT = new Set(['source', 'captured_at', 'revoked_at', 'revoked_by']);

const ERASED_REASON = 'erased on request';

function phoneProblem(phone: string): AppError {
  return badRequest(`phone_number ${JSON.stringify(phone)} ${E164_HINT}`, [{ path: '/phone_number', message: E164_HINT }], 'invalid_phone_number');
}

export class PrivacyService {
  constructor(
    private readonly db: Db,
    private readonly recordings: RecordingStore,
    private readonly onFinished: OnFinished,
    private readonly log: Logger,
  ) {}

  /** The caller's scope over leads (`l`), narrowed to one reseller when an admin names it; another's is refused. */
  private scope(caller: Principal, resellerId: string | undefined): { leads: Scoped; optOuts: Scoped; lists: Scoped } {
    if (resellerId !== undefined && caller.role !== 'admin' && resellerId !== caller.resellerId) {
      throw forbidden(`reseller_id ${resellerId} is outside the scope of this token`, 'out_of_scope');
    }
    if (caller.role === 'admin') {
      return resellerId === undefined
        ? { leads: { sql: 'TRUE', params: [] }, optOuts: { sql: 'TRUE', params: [] }, lists: { sql: 'TRUE', params: [] } }
        : {
            leads: { sql: 'l.reseller_id = $1', params: [resellerId] },
            optOuts: { sql: 'b.reseller_id = $1', params: [resellerId] },
            lists: { sql: '(d.reseller_id = $1 OR d.reseller_id IS NULL)', params: [resellerId] },
          };
    }
    const leads: unknown[] = [];
    const sql = scopeCondition(caller, { reseller: 'l.reseller_id', merchant: 'l.merchant_id' }, leads);
    return {
      leads: { sql, params: leads },
      // A merchant's erasure reaches the opt-outs its own leads gave; a reseller's all of its own.
      optOuts:
        caller.role === 'reseller'
          ? { sql: 'b.reseller_id = $1', params: [caller.resellerId] }
          : { sql: 'b.reseller_id = $1 AND b.lead_id IN (SELECT l.id FROM leads l WHERE l.merchant_id = $2)', params: [caller.resellerId, caller.merchantId] },
      lists: { sql: '(d.reseller_id = $1 OR d.reseller_id IS NULL)', params: [caller.resellerId] },
    };
  }

  /** Everything Dialer holds about a number, in the caller's scope, as one document. */
  async export(caller: Principal, phone: string): Promise<ExportDocument> {
    if (!isE164(phone)) throw phoneProblem(phone);
    const scope = this.scope(caller, undefined);
    const repo = new PrivacyRepository(this.db);
    const leads = await repo.leads({ phone }, scope.leads);
    const attempts = await repo.attempts(leads.map((l) => l.id));
    const optOutScope = caller.role === 'admin' ? scope.optOuts : { sql: '(b.reseller_id = $1 OR b.reseller_id IS NULL)', params: [caller.resellerId] };
    const [optOuts, lists] = await Promise.all([repo.optOuts(phone, optOutScope), repo.dncLists(phone, scope.lists)]);
    return {
      phone_number: phone,
      generated_at: new Date().toISOString(),
      leads: leads.map((l) => ({
        lead: leadView(l) as unknown as Record<string, unknown>,
        attempts: attempts
          .filter((a) => a.lead_id === l.id)
          .map(({ lead_id: _, started_at, ended_at, ...a }) => ({ ...a, started_at: isoRequired(started_at), ended_at: iso(ended_at) })),
      })),
      blacklist: optOuts.map((b) => ({ ...b, created_at: isoRequired(b.created_at) })),
      dnc_lists: lists,
    };
  }

  /**
   * Erases a person: every lead of the number in scope loses its personal content (its number
   * becomes the number's hash), waiting leads are finished unanswered, the recordings' files are
   * deleted (before the database is changed: a store that fails leaves everything as it was), the
   * number's opt-outs are kept as its hash. Refused while a call to the number is live (409).
   */
  async erase(caller: Principal, body: ErasureBody): Promise<ErasureResult> {
    if ((body.phone_number === undefined) === (body.lead_id === undefined)) {
      throw badRequest('Name the person by phone_number or by lead_id (one of them)', [{ path: '', message: 'needs exactly one of phone_number, lead_id' }], 'erasure_target');
    }
    if (body.phone_number !== undefined && !isE164(body.phone_number)) throw phoneProblem(body.phone_number);
    const scope = this.scope(caller, body.reseller_id);
    const repo = new PrivacyRepository(this.db);
    let phone = body.phone_number;
    if (body.lead_id !== undefined) {
      const [lead] = await repo.leads({ leadId: body.lead_id }, scope.leads);
      if (!lead) throw notFound(`Lead ${body.lead_id}`);
      const number = lead.payload.customer_mobile_number;
      phone = isE164(number) ? number : undefined;
    }
    const target = phone !== undefined ? { phone } : { leadId: body.lead_id! };
    const before = await repo.leads(target, scope.leads);
    const optOutsBefore = phone !== undefined ? (await repo.optOuts(phone, scope.optOuts)).length : 0;
    if (before.length === 0 && optOutsBefore === 0) throw notFound(`Anything about ${phone ?? 'this lead'} in the scope of this token`, 'nothing_to_erase');
    const live = before.find((l) => l.status === 'PROCESSING');
    if (live) throw conflict(`Lead ${live.id} is in a call now: erase once the call has ended`, 'call_in_progress');

    // The files first, so that a store that fails leaves the database as it was (and a retry finds them).
    const attempts = await repo.attempts(before.map((l) => l.id));
    const deleted = new Map<string, string[]>();
    for (const lead of before) {
      const callIds = new Set([lead.call_id, ...attempts.filter((a) => a.lead_id === lead.id).map((a) => a.call_id)].filter((c): c is string => !!c));
      for (const callId of callIds) {
        try {
          if (await this.recordings.delete(callId)) deleted.set(lead.id, [...(deleted.get(lead.id) ?? []), callId]);
        } catch (err) {
          this.log.error({ leadId: lead.id, callId, err }, 'erasure: a recording could not be deleted');
          throw new AppError(503, 'recording_store_unavailable', `The recording of call ${callId} could not be deleted; nothing was erased, try again`);
        }
      }
    }

    const result = await this.db.tx(async (q) => {
      const txRepo = new PrivacyRepository(q);
      const leads = await txRepo.leads(target, scope.leads, true);
      const inCall = leads.find((l) => l.status === 'PROCESSING');
      if (inCall) throw conflict(`Lead ${inCall.id} is in a call now: erase once the call has ended`, 'call_in_progress');
      const hash = phone !== undefined ? await txRepo.phoneHash(phone) : null;
      const cut = leads.map((l) => erasedContent(l, hash));
      await eraseLeadContent(q, cut.map((c) => c.lead));
      const waiting = leads.filter((l) => l.status === 'BACKLOG' || l.status === 'RETRY').map((l) => l.id);
      if (waiting.length > 0) await abortLeads(q, waiting.map((lead_id) => ({ lead_id, cancellation_reason: ERASED_REASON })), { sql: 'TRUE', params: [] }, this.onFinished);
      const ids = leads.map((l) => l.id);
      const optOuts = phone !== undefined ? await hashOptOuts(q, phone, scope.optOuts) : 0;
      const deliveries = await eraseDeliveryPayloads(q, ids);
      const lines = await forgetLiveLines(q, ids);
      const reports: ErasedLeadReport[] = leads.map((l, i) => ({
        id: l.id,
        status: waiting.includes(l.id) ? 'FINISHED' : l.status,
        outcome: waiting.includes(l.id) ? 'aborted' : l.outcome,
        ...cut[i]!.report,
        recordings: deleted.get(l.id) ?? [],
        aborted: waiting.includes(l.id),
      }));
      return { id: newId(), erased_at: new Date().toISOString(), phone_number_hash: hash, leads: reports, opt_outs_hashed: optOuts, webhook_deliveries: deliveries, live_transcript_lines: lines };
    });
    erasures.inc();
    return result;
  }
}

/** What erasure leaves of a lead, and what it removed. */
function erasedContent(l: LeadRow, hash: string | null): { lead: ErasedLead; report: Pick<ErasedLeadReport, 'payload_fields' | 'metadata_fields' | 'transcript' | 'analysis' | 'consent_evidence'> } {
  const payload: Record<string, unknown> = {};
  const payloadFields: string[] = [];
  for (const [k, v] of Object.entries(l.payload ?? {})) {
    if (NEUTRAL_PAYLOAD.has(k)) payload[k] = v;
    else payloadFields.push(k);
  }
  if ('customer_mobile_number' in (l.payload ?? {})) payload.customer_mobile_number = hash;
  payload.erased = true;
  const meta: Record<string, unknown> = {};
  const metaFields: string[] = [];
  for (const [k, v] of Object.entries(l.meta_data ?? {})) {
    if (NEUTRAL_META.has(k)) meta[k] = v;
    else metaFields.push(k);
  }
  meta.erased_at = new Date().toISOString();
  let consent: Record<string, unknown> | null = null;
  let evidence = false;
  if (l.consent) {
    consent = {};
    for (const [k, v] of Object.entries(l.consent)) {
      if (NEUTRAL_CONSENT.has(k)) consent[k] = v;
      else evidence = true;
    }
    consent.erased_at = meta.erased_at;
  }
  const transcript = Array.isArray(l.meta_data?.transcription) ? l.meta_data.transcription.length > 0 : false;
  return {
    lead: { id: l.id, payload, meta_data: meta, consent },
    report: { payload_fields: payloadFields, metadata_fields: metaFields, transcript, analysis: l.meta_data?.analysis != null, consent_evidence: evidence },
  };
}
