/**
 * Terminology
 * - campaign: a named set of leads of one template, owned like the template (a reseller, maybe a
 *   merchant), with controls that narrow how its leads are dialled: a cap on live calls, a pace of
 *   call starts, dates, a circuit breaker. The configuration of the reseller and template still
 *   rules windows, retries and rate limits; a campaign never widens them.
 * - state: what a person or the breaker decided (active, paused, stopped); the status shown is
 *   read from it, the dates and the leads (repository.ts).
 * - progress: the leads counted in one reading: queued + in_progress + finished = total; a big
 *   campaign's reading is kept a few seconds (`as_of` says when it was read).
 */
import { assertOwnerInScope, inScope, scopeCondition, type Principal } from '../auth/index.js';
import { retryConflicts, type Db, type Queryable } from '../db/index.js';
import { AppError, badRequest, conflict, notFound, type FieldError } from '../lib/errors.js';
import { newId } from '../lib/ids.js';
import { findTemplateByName } from '../templates/index.js';
import { resultColumns, resultsCsv } from './results.js';
import { CampaignsRepository, type CampaignRef, type CampaignRow, type ProgressRow } from './repository.js';
import type { CampaignListQuery, CreateCampaignBody } from './schema.js';

/** Finishes the listed waiting leads of a stopped campaign (the lifecycle's abort), in the caller's transaction. */
export type FinishStopped = (q: Queryable, campaignId: string, leadIds: readonly string[]) => Promise<void>;

/** Wakes the workers (a resumed campaign's leads may be called at once). */
export type WakeWorkers = (q: Queryable) => Promise<void>;

/** How many waiting leads of a stopped campaign one transaction finishes. */
const STOP_BATCH = 1000;

const SCOPE = { reseller: 'c.reseller_id', merchant: 'c.merchant_id' };

export interface Progress {
  total: number;
  queued: number;
  in_progress: number;
  finished: number;
  by_outcome: Record<string, number>;
  answer_rate: number | null;
  avg_duration: number | null;
  cost: number;
  live_calls: number;
  estimated_finish_at: string | null;
  as_of: string;
}

/**
 * The progress of a campaign of at least this many leads is kept (and shared by every reader) for
 * ten times as long as reading it took, between 1 and 30 s: it walks the campaign's leads, and a
 * dashboard or a script polling a big campaign must not keep the database busy. Smaller
 * campaigns' progress is read afresh every time.
 */
const PROGRESS_KEEP_FROM_LEADS = 50_000;
const PROGRESS_KEEP_MS = { min: 1000, max: 30_000 };

/** The progress as the API shows it, from one reading of the leads. */
export function progressOf(p: ProgressRow): Progress {
  // Leads finished over the last ten minutes set the rate the rest is expected to go at.
  const perSecond = p.finished_recently / 600;
  const waiting = p.queued + p.in_progress;
  const eta = waiting === 0 ? null : perSecond > 0 ? new Date(new Date(p.now).getTime() + (waiting / perSecond) * 1000).toISOString() : null;
  return {
    total: p.total,
    queued: p.queued,
    in_progress: p.in_progress,
    finished: p.finished,
    by_outcome: p.by_outcome ?? {},
    answer_rate: p.dialled_finished === 0 ? null : Math.round((p.reached / p.dialled_finished) * 10_000) / 10_000,
    avg_duration: p.avg_duration === null ? null : Math.round(p.avg_duration * 100) / 100,
    cost: Number(p.cost ?? 0),
    live_calls: p.in_progress,
    estimated_finish_at: eta,
    as_of: new Date(p.now).toISOString(),
  };
}

/**
 * Whether a lead pushed for (reseller, merchant, template) may join `campaign`; the problem that
 * refuses it otherwise. A campaign outside the push's owner is not found (its existence does not
 * leak); one of another template, stopped, or past its end is a conflict.
 */
export function joinProblem(campaign: CampaignRef | undefined, id: string, lead: { resellerId: string; merchantId: string | null; templateId: string }): AppError | undefined {
  const path = [{ path: '/campaign_id', message: '' }];
  if (!campaign || campaign.reseller_id !== lead.resellerId || (campaign.merchant_id !== null && campaign.merchant_id !== lead.merchantId)) {
    path[0]!.message = 'names no campaign of this reseller/merchant';
    return new AppError(404, 'campaign_not_found', `No campaign ${id} exists under reseller ${lead.resellerId}${lead.merchantId ? ` and merchant ${lead.merchantId}` : ''}`, path);
  }
  if (campaign.template_id !== lead.templateId) {
    path[0]!.message = 'is a campaign of another template';
    return new AppError(409, 'campaign_template_mismatch', `Campaign ${id} calls another template than the lead's`, path);
  }
  if (campaign.state === 'stopped' || campaign.ended) {
    path[0]!.message = campaign.state === 'stopped' ? 'is stopped' : 'has ended';
    return new AppError(409, campaign.state === 'stopped' ? 'campaign_stopped' : 'campaign_ended', `Campaign ${id} ${path[0]!.message}: it takes no more leads`, path);
  }
  return undefined;
}

export class CampaignsService {
  private readonly repo: CampaignsRepository;

  constructor(
    private readonly db: Db,
    private readonly finishStopped: FinishStopped,
    private readonly wake: WakeWorkers,
  ) {
    this.repo = new CampaignsRepository(db);
  }

  async create(caller: Principal, body: CreateCampaignBody): Promise<CampaignRow> {
    const merchantId = body.merchant_id ?? (caller.role === 'merchant' || caller.role === 'user' ? caller.merchantId : null);
    assertOwnerInScope(caller, body.reseller_id, merchantId);
    const errors: FieldError[] = [];
    const startAt = body.start_at ? new Date(body.start_at) : null;
    const endAt = body.end_at ? new Date(body.end_at) : null;
    if (startAt && endAt && endAt <= startAt) errors.push({ path: '/end_at', message: 'must be after start_at' });
    if (endAt && endAt.getTime() <= Date.now()) errors.push({ path: '/end_at', message: 'must be in the future' });
    if (errors.length > 0) throw badRequest(`Request body: ${errors[0]!.path} ${errors[0]!.message}`, errors, 'invalid_campaign');
    const template = await findTemplateByName(this.db, body.reseller_id, body.template);
    const merchantOk = async () => {
      if (merchantId === null) return true;
      const { rows } = await this.db.query<{ reseller_id: string }>('SELECT reseller_id FROM merchants WHERE id = $1', [merchantId]);
      return rows[0]?.reseller_id === body.reseller_id;
    };
    if (!template || (template.merchant_id !== null && template.merchant_id !== merchantId) || !(await merchantOk())) {
      throw new AppError(404, 'template_not_found', `No template named ${JSON.stringify(body.template)} exists under reseller ${body.reseller_id}${merchantId ? ` and merchant ${merchantId}` : ''}`, [
        { path: '/template', message: 'names no template in this reseller/merchant' },
      ]);
    }
    const breaker = body.circuit_breaker ?? null;
    const id = newId();
    await this.repo.insert({
      id,
      reseller_id: body.reseller_id,
      merchant_id: merchantId,
      template_id: template.id,
      template_name: template.name,
      name: body.name,
      max_concurrent_calls: body.max_concurrent_calls ?? null,
      max_calls_per_second: body.max_calls_per_second ?? null,
      start_at: startAt,
      end_at: endAt,
      breaker_failure_ratio: breaker?.failure_ratio ?? null,
      breaker_window_seconds: breaker?.window_seconds ?? null,
      breaker_min_calls: breaker?.min_calls ?? null,
    });
    return (await this.repo.byId(id))!;
  }

  list(caller: Principal, query: CampaignListQuery, limit: number, offset: number) {
    const params: unknown[] = [];
    const conds = [scopeCondition(caller, SCOPE, params)];
    for (const key of ['reseller_id', 'merchant_id'] as const) {
      if (query[key] === undefined) continue;
      params.push(query[key]);
      conds.push(`c.${key} = $${params.length}`);
    }
    return this.repo.list(conds.join(' AND '), params, limit, offset);
  }

  /** 404 both when missing and when out of scope. */
  async get(caller: Principal, id: string): Promise<CampaignRow> {
    return visible(caller, id, await this.repo.byId(id));
  }

  /** Readings of big campaigns' progress kept a while (see PROGRESS_KEEP_FROM_LEADS), by campaign. */
  private readonly kept = new Map<string, { until: number; reading: Promise<Progress> }>();

  /** The campaign's progress: read now, or the reading kept for a big campaign (its `as_of` says when). */
  progress(id: string): Promise<Progress> {
    const now = Date.now();
    for (const [key, k] of this.kept) if (k.until <= now) this.kept.delete(key);
    const kept = this.kept.get(id);
    if (kept) return kept.reading;
    const started = performance.now();
    const reading = this.repo.progress(id).then(progressOf);
    // Readers meanwhile share it; once read, it is kept only if it was dear.
    this.kept.set(id, { until: Number.POSITIVE_INFINITY, reading });
    reading.then(
      (p) => {
        const keepMs = Math.min(PROGRESS_KEEP_MS.max, Math.max(PROGRESS_KEEP_MS.min, 10 * (performance.now() - started)));
        if (p.total >= PROGRESS_KEEP_FROM_LEADS) this.kept.set(id, { until: Date.now() + keepMs, reading });
        else if (this.kept.get(id)?.reading === reading) this.kept.delete(id);
      },
      () => {
        if (this.kept.get(id)?.reading === reading) this.kept.delete(id);
      },
    );
    return reading;
  }

  /** A person changed the campaign: the next reading of its progress is fresh. */
  private forgetProgress(id: string): void {
    this.kept.delete(id);
  }

  /** The columns of the campaign's results as CSV (the analysis fields of its template among them). */
  resultColumns(c: CampaignRow): Promise<string[]> {
    return resultColumns(this.db, c.template_id);
  }

  results(c: CampaignRow, limit: number, offset: number) {
    return this.repo.results(c.id, limit, offset);
  }

  resultsCsv(c: CampaignRow, columns: readonly string[], base: string): AsyncGenerator<string> {
    return resultsCsv(this.db, c.id, columns, base);
  }

  /** Pauses a scheduled or running campaign: no new call of it starts on any worker once this returns. */
  pause(caller: Principal, id: string): Promise<CampaignRow> {
    return this.change(caller, id, (c) => {
      if (c.status === 'paused') throw conflict(`Campaign ${id} is already paused`, 'campaign_paused');
      refuseFinished(c, 'paused');
      return { state: 'paused', reason: `paused by ${caller.label} (${caller.role})` };
    });
  }

  /** Resumes a paused campaign where it stopped (the breaker's reason is cleared) and wakes the workers. */
  resume(caller: Principal, id: string): Promise<CampaignRow> {
    return this.change(caller, id, (c) => {
      if (c.state !== 'paused') throw conflict(`Campaign ${id} is ${c.status}, not paused: there is nothing to resume`, 'campaign_not_paused');
      return { state: 'active', reason: null };
    });
  }

  /**
   * Stops a campaign for good: no new call of it starts, calls in flight end normally, and its
   * waiting leads finish `aborted` with the cancellation reason "campaign stopped", a batch per
   * transaction (no claim takes them meanwhile: the campaign is stopped first).
   */
  async stop(caller: Principal, id: string): Promise<CampaignRow> {
    // A campaign past its end may still hold queued leads (they are not called): stopping it finishes them.
    const waiting = (await this.repo.waitingLeads(id, 1)).length > 0;
    await this.change(caller, id, (c) => {
      if (!(c.status === 'completed' && c.state === 'active' && waiting)) refuseFinished(c, 'stopped');
      return { state: 'stopped', reason: null };
    });
    for (;;) {
      // Aborting many leads at once can cross a finish locking some of them in another order: the
      // batch PostgreSQL rolls back for it runs again.
      const done = await retryConflicts(() =>
        this.db.tx(async (q) => {
          const ids = await new CampaignsRepository(q).waitingLeads(id, STOP_BATCH);
          await this.finishStopped(q, id, ids);
          return ids.length;
        }),
      );
      if (done < STOP_BATCH) break;
    }
    this.forgetProgress(id);
    return (await this.repo.byId(id))!;
  }

  private async change(caller: Principal, id: string, decide: (c: CampaignRow) => { state: CampaignRow['state']; reason: string | null }): Promise<CampaignRow> {
    await this.db.tx(async (q) => {
      const repo = new CampaignsRepository(q);
      // Locked: a claim deciding the campaign's starts at this moment finishes first, and every
      // claim after this commits reads the new state.
      const current = visible(caller, id, await repo.byId(id, true));
      const next = decide(current);
      await repo.setState(id, next.state, next.reason);
      if (next.state === 'active') await this.wake(q);
    });
    this.forgetProgress(id);
    return (await this.repo.byId(id))!;
  }
}

function visible(caller: Principal, id: string, row: CampaignRow | undefined): CampaignRow {
  if (!row || !inScope(caller, row.reseller_id, row.merchant_id)) throw notFound(`Campaign ${id}`, 'campaign_not_found');
  return row;
}

/** A completed or stopped campaign is finished: it cannot be paused or stopped (409, nothing written). */
function refuseFinished(c: CampaignRow, verb: string): void {
  if (c.status === 'completed' || c.status === 'stopped') {
    throw conflict(`Campaign ${c.id} is ${c.status}: it cannot be ${verb}`, 'campaign_finished');
  }
}
