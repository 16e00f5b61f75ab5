import { scopeCondition, type Principal } from '../auth/index.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { retryConflicts, type Db } from '../db/index.js';
import { AppError, DATABASE_RETRY_AFTER_SECONDS, isUnstorableText, notFound, toError, unstorableText } from '../lib/errors.js';
import { preparePush, PushContext, targetLoader, type Pushed, type TargetLookup } from './push.js';
import { GroupInserter } from './group-insert.js';
import type { OutboundPolicy } from '../lib/outbound/index.js';
import { abortLeads, configurationCapHolds, queueLeads, type LeadRow, type NewLead, type OnFinished } from '../lifecycle/index.js';
import { liveCallsNow } from '../metrics/index.js';
import type { RecordAnswer } from './idempotency.js';
import { LeadSearchRepository } from './search-repository.js';
import { campaignHold } from '../campaigns/index.js';
import { trunkHold } from '../trunks/index.js';
import { AttemptsRepository, type AttemptRow } from './attempts-repository.js';
import { findDuplicates, type Duplicate } from './duplicates.js';
import { previewImport, type PreviewBody } from './import-preview.js';
import type { LeadExportQuery, LeadListQuery } from './list-query.js';

/** Pushes of a batch checked together before the event loop is given back (about 5 to 10 ms of work). */
const CHECK_GROUP = 50;

/** The body limit of POST /leads when none is given (Fastify's default, and DIALER_BODY_LIMIT_BYTES's). */
const DEFAULT_LEAD_LIMIT_BYTES = 1024 * 1024;

/**
 * A lead of a batch larger than POST /leads accepts is refused as POST /leads would refuse it
 * (413), so the batch is no way around the limit. Its size is that of its JSON as Dialer writes it
 * (no whitespace), which is never more than the bytes the client sent for it.
 */
function oversize(body: unknown, index: number, limitBytes: number): AppError | undefined {
  let json: string;
  try {
    json = JSON.stringify(body) ?? '';
  } catch {
    // Nested deeper than JSON.stringify's stack: a lead no statement could carry either.
    return new AppError(422, 'schema_validation_failed', `Lead ${index} is nested too deeply to be stored`, [{ path: `/leads/${index}`, message: 'is nested too deeply' }]);
  }
  const bytes = Buffer.byteLength(json);
  if (bytes <= limitBytes) return undefined;
  return new AppError(413, 'body_too_large', `Lead ${index} is ${bytes} bytes, larger than the ${limitBytes} bytes POST /leads accepts`, [
    { path: `/leads/${index}`, message: `is larger than ${limitBytes} bytes` },
  ]);
}

export interface PushOutcome {
  status: 'queued';
  lead_call_tracker_id: string;
  order_id: string;
  message: string;
}

type DuplicateView = Omit<Duplicate, 'index'>;
export type BatchItem =
  | { index: number; status: 201; result: PushOutcome; duplicate?: DuplicateView }
  | { index: number; status: 200; skipped: true; duplicate: DuplicateView }
  | { index: number; status: number; problem: ReturnType<AppError['toProblem']> };

/** What POST /leads/batch checks of duplicates (skip_duplicates, dedupe_days); absent: nothing. */
export interface DuplicateCheck {
  skip: boolean;
  dedupeDays?: number | undefined;
}

export interface AbortItem {
  id: string;
  status: 'success' | 'already_aborted' | 'processing' | 'error';
  message: string;
}

const SCOPE = { reseller: 'l.reseller_id', merchant: 'l.merchant_id' };

/** The write failed: nothing was queued and the client may retry (a 500). */
function notQueued(err: unknown): AppError {
  if (isUnstorableText(err)) return unstorableText();
  return new AppError(500, 'lead_not_queued', 'The lead was not queued because the database write failed; it is safe to retry', undefined, {
    cause: toError(err),
    retryAfterSeconds: DATABASE_RETRY_AFTER_SECONDS,
  });
}

const outcomeOf = (p: Pushed): PushOutcome => ({ status: 'queued', lead_call_tracker_id: p.lead.id, order_id: p.lead.request_id, message: p.message });

export class LeadsService {
  private readonly inserter: GroupInserter;
  private readonly lookup: TargetLookup;
  private readonly search: LeadSearchRepository;

  /** `onFinished`: what a finish queues (the aborted leads' notifications), in the aborting transaction. */
  constructor(
    private readonly db: Db,
    private readonly onFinished: OnFinished,
    private readonly outbound: OutboundPolicy,
    /** The body limit of POST /leads: a lead of a batch may be no larger. */
    private readonly leadLimitBytes = DEFAULT_LEAD_LIMIT_BYTES,
  ) {
    this.search = new LeadSearchRepository(db);
    this.inserter = new GroupInserter((leads) => queueLeads(db, leads));
    this.lookup = targetLoader(db);
  }

  /**
   * POST /leads: one lead, or the AppError that refuses it. With `record` (an idempotency key's
   * answer) the lead is written in a transaction of its own with the answer, instead of grouped.
   */
  async push(caller: Principal, body: unknown, record?: RecordAnswer): Promise<PushOutcome> {
    const prepared = await preparePush(caller, body, new PushContext(this.db, this.lookup, this.outbound));
    const outcome = outcomeOf(prepared);
    try {
      if (record) await this.insertRecorded([prepared.lead], record, outcome);
      else await this.inserter.insert(prepared.lead);
    } catch (err) {
      if (err instanceof AppError) throw err;
      throw notQueued(err);
    }
    return outcome;
  }

  /** Leads and the answer that records them, all or nothing. */
  private insertRecorded(leads: NewLead[], record: RecordAnswer, answer: unknown): Promise<void> {
    return this.db.tx(async (q) => {
      await queueLeads(q, leads);
      await record(q, answer);
    });
  }

  /**
   * POST /leads/batch: each body checked on its own (the same checks and answers as POST /leads),
   * the valid ones inserted by one statement. A failed insert fails the whole request (500) with
   * nothing queued, so a client can simply resend it.
   */
  async pushBatch(caller: Principal, bodies: unknown[], record?: RecordAnswer, check?: DuplicateCheck): Promise<{ queued: number; rejected: number; skipped?: number; results: BatchItem[] }> {
    const ctx = new PushContext(this.db, this.lookup, this.outbound);
    // Checked side by side, a group at a time, so the lookups of a group share queries; answered in
    // the order sent. Between groups the event loop serves other work: the checks of a thousand
    // pushes in one go (schema, phone number, variables: about 150 µs each) held the loop that paces
    // live calls' audio for 100 to 150 ms, a gap the callers heard during an import.
    // While this process carries live calls, the checks take at most half of the event loop: after
    // each group it waits as long as the group took, so an import slows down rather than crowd
    // the calls' audio out.
    const settled: PromiseSettledResult<Pushed>[] = [];
    let took = 0;
    for (let from = 0; from < bodies.length; from += CHECK_GROUP) {
      if (from > 0) await (liveCallsNow() > 0 ? sleep(Math.min(took, 50)) : new Promise((resolve) => setImmediate(resolve)));
      const started = performance.now();
      const group = bodies.slice(from, from + CHECK_GROUP).map((body, i) => {
        const tooLarge = oversize(body, from + i, this.leadLimitBytes);
        return tooLarge ? Promise.reject(tooLarge) : preparePush(caller, body, ctx);
      });
      settled.push(...(await Promise.allSettled(group)));
      took = performance.now() - started;
    }
    const results: BatchItem[] = [];
    const accepted: Pushed[] = [];
    for (const [index, outcome] of settled.entries()) {
      if (outcome.status === 'fulfilled') {
        accepted.push(outcome.value);
        results.push({ index, status: 201, result: outcomeOf(outcome.value) });
        continue;
      }
      const err: unknown = outcome.reason;
      if (!(err instanceof AppError) || err.status >= 500) throw err;
      results.push({ index, status: err.status, problem: err.toProblem() });
    }
    let skipped = 0;
    if (check) {
      const duplicates = await this.batchDuplicates(accepted, results, check.dedupeDays);
      for (const [at, { index: _index, ...duplicate }] of duplicates) {
        const item = results[at]!;
        if (check.skip) results[at] = { index: item.index, status: 200, skipped: true, duplicate };
        else results[at] = { ...item, duplicate } as BatchItem;
      }
      if (check.skip && duplicates.size > 0) {
        skipped = duplicates.size;
        const dropped = new Set([...duplicates.values()].map((d) => d.index));
        const kept = accepted.filter((_, i) => !dropped.has(i));
        accepted.length = 0;
        accepted.push(...kept);
      }
    }
    const answer = { queued: accepted.length, rejected: bodies.length - accepted.length - skipped, ...(check?.skip ? { skipped } : {}), results };
    try {
      if (record) await this.insertRecorded(accepted.map((p) => p.lead), record, answer);
      else await queueLeads(this.db, accepted.map((p) => p.lead));
    } catch (err) {
      if (err instanceof AppError) throw err;
      throw notQueued(err);
    }
    return answer;
  }

  /**
   * The duplicates among a batch's accepted leads, keyed by their position in `results`; each
   * duplicate's `index` is its position in `accepted`. Leads are checked by reseller and campaign.
   */
  private async batchDuplicates(accepted: Pushed[], results: BatchItem[], dedupeDays: number | undefined): Promise<Map<number, Duplicate>> {
    const resultAt = results.flatMap((r, at) => (r.status === 201 ? [at] : []));
    const groups = new Map<string, number[]>();
    accepted.forEach((p, i) => {
      const key = `${p.lead.reseller_id}\u0000${p.lead.campaign_id ?? ''}`;
      groups.set(key, [...(groups.get(key) ?? []), i]);
    });
    const found = new Map<number, Duplicate>();
    for (const members of groups.values()) {
      const lead = accepted[members[0]!]!.lead;
      const phones = members.map((i) => accepted[i]!.lead.payload.customer_mobile_number as string | undefined);
      const duplicates = await findDuplicates(this.db, phones, { resellerId: lead.reseller_id, campaignId: lead.campaign_id ?? undefined, dedupeDays });
      for (const d of duplicates) {
        const i = members[d.index]!;
        const first = d.first_index === undefined ? {} : { first_index: results[resultAt[members[d.first_index]!]!]!.index };
        found.set(resultAt[i]!, { ...d, ...first, index: i });
      }
    }
    return found;
  }

  /** POST /leads/import/preview: the rows, columns and duplicates of a CSV; nothing is queued. */
  previewImport(caller: Principal, body: PreviewBody) {
    return previewImport(this.db, caller, body);
  }

  /** 404 both when missing and when out of scope. */
  async get(caller: Principal, id: string): Promise<LeadRow> {
    const params: unknown[] = [id];
    const { rows } = await this.db.query<LeadRow>(`SELECT l.* FROM leads l WHERE l.id = $1 AND ${scopeCondition(caller, SCOPE, params)}`, params);
    if (!rows[0]) throw notFound(`Lead ${id}`);
    return rows[0];
  }

  /** Why a waiting lead is held: by its campaign, or (when due) by its configuration's cap of live calls or its SIP trunk's caps; or null. */
  async heldReason(lead: LeadRow): Promise<string | null> {
    if (lead.status !== 'BACKLOG' && lead.status !== 'RETRY') return null;
    const byCampaign = lead.campaign_id ? await campaignHold(this.db, lead.campaign_id) : null;
    if (byCampaign) return byCampaign;
    const due = lead.next_attempt_at !== null && new Date(lead.next_attempt_at).getTime() <= Date.now();
    if (!due) return null;
    if (await configurationCapHolds(this.db, lead.reseller_id, lead.template_id)) return 'configuration_cap';
    return trunkHold(this.db, lead.reseller_id, lead.template_id);
  }

  /** GET /leads: a page of the leads in scope that match, in the order asked. */
  list(caller: Principal, query: LeadListQuery, limit: number, offset: number) {
    const params: unknown[] = [];
    const where = this.search.condition(scopeCondition(caller, SCOPE, params), params, query);
    return this.search.page(where, params, { sort: query.sort ?? 'created_at', order: query.order ?? 'desc', limit, offset, count: query.count ?? 'exact' });
  }

  /** GET /leads/export: every lead in scope that matches, a batch at a time. */
  exportAll(caller: Principal, query: LeadExportQuery, each: (rows: LeadRow[]) => Promise<boolean>): Promise<void> {
    const params: unknown[] = [];
    const where = this.search.condition(scopeCondition(caller, SCOPE, params), params, query);
    return this.search.forEachBatch(where, params, query.order ?? 'desc', 1000, each);
  }

  /** GET /leads/{id}/attempts: the lead's attempt history, first attempt first (404 out of scope). */
  async attempts(caller: Principal, id: string): Promise<AttemptRow[]> {
    await this.get(caller, id);
    return new AttemptsRepository(this.db).ofLead(id);
  }

  /** POST /lead/abort: one answer per requested lead, in request order. */
  async abort(caller: Principal, requests: { lead_id: string; cancellation_reason: string }[]): Promise<AbortItem[]> {
    // The first request for a lead decides its reason; repeats get the same answer.
    const firstWins = new Map<string, { lead_id: string; cancellation_reason: string }>();
    for (const r of requests) if (!firstWins.has(r.lead_id)) firstWins.set(r.lead_id, r);
    const params: unknown[] = [null];
    const scope = scopeCondition(caller, SCOPE, params);
    let outcomes;
    try {
      // One transaction: the aborted leads and their notifications (the webhook's failure payload, outcome aborted).
      // It locks many leads at once, so it can cross a finish or a claim locking some of them in
      // another order; PostgreSQL then rolls one back, and this one runs again.
      outcomes = await retryConflicts(() => this.db.tx((q) => abortLeads(q, [...firstWins.values()], { sql: scope, params: params.slice(1) }, this.onFinished)));
    } catch (err) {
      const message = `The database failed while aborting: ${toError(err).message}; retry`;
      return requests.map((r) => ({ id: r.lead_id, status: 'error' as const, message }));
    }
    const byId = new Map(outcomes.map((o) => [o.id, o]));
    return requests.map(({ lead_id: id }): AbortItem => {
      const o = byId.get(id)!;
      if (o.aborted) return { id, status: 'success', message: 'Lead aborted: it will not be dialled' };
      switch (o.status) {
        case 'PROCESSING':
          return { id, status: 'processing', message: 'The call is dialling or in conversation; it cannot be aborted' };
        case 'FINISHED':
          return { id, status: 'already_aborted', message: `The lead is already FINISHED (outcome ${o.outcome ?? 'none'})` };
        default:
          return { id, status: 'error', message: `Lead ${id} was not found` };
      }
    });
  }

  /** The lead whose call is `callId`, whoever asks (a signed recording link already says who may); 404 otherwise. */
  async byCallIdUnscoped(callId: string): Promise<LeadRow> {
    const { rows } = await this.db.query<LeadRow>(`SELECT l.* FROM leads l WHERE l.call_id = $1 ORDER BY l.updated_at DESC LIMIT 1`, [callId]);
    if (!rows[0]) throw notFound(`Call ${callId}`, 'call_not_found');
    return rows[0];
  }

  /** The lead whose call is `callId`, in scope; 404 otherwise. */
  async byCallId(caller: Principal, callId: string): Promise<LeadRow> {
    const params: unknown[] = [callId];
    const { rows } = await this.db.query<LeadRow>(
      `SELECT l.* FROM leads l WHERE l.call_id = $1 AND ${scopeCondition(caller, SCOPE, params)} ORDER BY l.updated_at DESC LIMIT 1`,
      params,
    );
    if (!rows[0]) throw notFound(`Call ${callId}`, 'call_not_found');
    return rows[0];
  }
}
