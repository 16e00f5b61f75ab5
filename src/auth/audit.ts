/**
 * The audit trail: every write through the API (create, update, delete, abort, token issue and
 * revoke) and every login, success or failure, recorded with who (a user's email or an s2s token's
 * name, and its id), the role and scope, what (method, route, resource, resource id, status), when,
 * and the client address. Request bodies are never recorded (they may hold secrets): a login
 * failure keeps only the email tried. The entry is written before the response leaves (writes
 * finishing together share one INSERT), so a client that saw the answer can find it in the trail.
 * Entries are kept DIALER_AUDIT_RETENTION_DAYS days. docs/security.md describes it.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Db } from '../db/index.js';
import { Batcher } from '../lib/batcher.js';
import type { Logger } from '../lib/logger.js';
import { storableText } from '../lib/text.js';
import { AuditRepository, type AuditEntry } from './audit-repository.js';
import type { Principal } from './principal.js';
import { scopeCondition } from './scope.js';

export interface AuditFilter {
  principal_id?: string;
  principal_name?: string;
  action?: string;
  resource?: string;
  resource_id?: string;
  from?: string;
  to?: string;
}

const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const VERB: Record<string, string> = { POST: 'create', PUT: 'update', PATCH: 'update', DELETE: 'delete' };
/** A string of the request, cut short and made storable (a refused request may carry a NUL or a lone surrogate). */
const clip = (value: unknown, max = 320) => (typeof value === 'string' ? storableText(value.slice(0, max)) : null);

export class AuditService {
  private readonly repo: AuditRepository;
  private readonly writer: Batcher<AuditEntry, undefined>;

  constructor(db: Db) {
    this.repo = new AuditRepository(db);
    this.writer = new Batcher(async (entries) => {
      await this.repo.insert(entries);
      return entries.map(() => undefined);
    });
  }

  async record(entry: AuditEntry): Promise<void> {
    await this.writer.submit(entry);
  }

  /** Admins read everything; a reseller the entries of principals in its reseller. */
  list(caller: Principal, filter: AuditFilter, limit: number, offset: number) {
    const params: unknown[] = [];
    const conds = [scopeCondition(caller, { reseller: 'a.reseller_id' }, params)];
    const add = (sql: (p: string) => string, value: string | undefined) => {
      if (value === undefined) return;
      params.push(value);
      conds.push(sql(`$${params.length}`));
    };
    add((p) => `a.principal_id = ${p}`, filter.principal_id);
    add((p) => `lower(a.principal_name) = lower(${p})`, filter.principal_name);
    add((p) => `a.action = ${p}`, filter.action);
    add((p) => `a.resource = ${p}`, filter.resource);
    add((p) => `a.resource_id = ${p}`, filter.resource_id);
    add((p) => `a.at >= ${p}::timestamptz`, filter.from);
    add((p) => `a.at < ${p}::timestamptz`, filter.to);
    return this.repo.list(conds.join(' AND '), params, limit, offset);
  }

  prune(retentionDays: number): Promise<number> {
    return this.repo.prune(retentionDays);
  }
}

function parsed(payload: unknown): Record<string, unknown> | undefined {
  if (typeof payload !== 'string' || payload.length > 1_000_000 || !payload.startsWith('{')) return undefined;
  try {
    return JSON.parse(payload) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

const ofPrincipal = (p: Principal) => ({
  principal_kind: p.kind,
  principal_id: p.id,
  principal_name: p.label,
  role: p.role,
  reseller_id: p.resellerId,
  merchant_id: p.merchantId,
});

/** The entry a finished request leaves, or undefined when it is not audited (reads, callbacks, unauthenticated). */
export function auditEntry(request: FastifyRequest, reply: FastifyReply, payload: unknown, prefix: string): AuditEntry | undefined {
  const url = request.routeOptions.url;
  if (!url?.startsWith(prefix) || !WRITE_METHODS.has(request.method)) return undefined;
  const config = request.routeOptions.config;
  const base = { method: request.method, route: url.slice(prefix.length), status: reply.statusCode, client_ip: request.ip, request_id: String(request.id), details: null };
  if (config.audit === 'login') {
    const body = (request.body ?? {}) as { email?: unknown };
    const user = reply.statusCode === 200 ? (parsed(payload)?.user as { id: string; email: string; role: string; reseller_id: string | null; merchant_id: string | null } | undefined) : undefined;
    return {
      ...base,
      action: user ? 'login.success' : 'login.failure',
      principal_kind: 'user',
      principal_id: user?.id ?? null,
      principal_name: user?.email ?? clip(body.email),
      role: user?.role ?? null,
      reseller_id: user?.reseller_id ?? null,
      merchant_id: user?.merchant_id ?? null,
      resource: 'session',
      resource_id: null,
    };
  }
  const permission = config.permission;
  if (!permission || permission[1] !== 'write' || !request.principal) return undefined;
  const params = (request.params ?? {}) as Record<string, unknown>;
  let resourceId = clip(params.id, 200) ?? clip(params.lead_id, 200);
  let details: Record<string, unknown> | null = null;
  const answer = reply.statusCode < 300 ? parsed(payload) : undefined;
  if (answer) {
    resourceId ??= clip(answer.id, 200) ?? clip(answer.lead_call_tracker_id, 200);
    if (typeof answer.queued === 'number') details = { queued: answer.queued, rejected: answer.rejected };
    // An erasure is recorded by its counts only: never the number it erased.
    if (config.audit === 'erasure' && Array.isArray(answer.leads)) {
      const leads = answer.leads as { id: string; recordings?: unknown[] }[];
      details = { lead_ids: leads.slice(0, 100).map((l) => l.id), recordings_deleted: leads.reduce((n, l) => n + (l.recordings?.length ?? 0), 0), opt_outs_hashed: answer.opt_outs_hashed };
    }
  }
  const leads = (request.body as { leads?: unknown } | undefined)?.leads;
  if (config.audit === 'abort' && Array.isArray(leads)) details = { lead_ids: leads.slice(0, 100).map((l: { lead_id?: unknown }) => clip(l?.lead_id, 64)) };
  return {
    ...base,
    ...ofPrincipal(request.principal),
    action: config.audit ?? VERB[request.method]!,
    resource: permission[0],
    resource_id: resourceId,
    details,
  };
}

/** Records the audit entry of every audited request before its response is sent. */
export function registerAuditTrail(app: FastifyInstance, audit: AuditService, prefix: string, log: Logger): void {
  app.addHook('onSend', async (request, reply, payload) => {
    const entry = auditEntry(request, reply, payload, prefix);
    // An audit write that fails does not undo the request it records: it is logged loudly instead.
    if (entry) await audit.record(entry).catch((err: unknown) => log.error({ err, entry }, 'audit entry not written'));
    return payload;
  });
}

/** Deletes audit entries past their retention, and login failures past their forgetting time, hourly. */
export class AuditRetention {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;

  constructor(
    private readonly options: { audit: AuditService; pruneLoginFailures: () => Promise<number>; retentionDays: number; log: Logger; everyMs?: number },
  ) {}

  start(): void {
    const run = () => {
      this.running = this.sweep();
    };
    run();
    this.timer = setInterval(run, this.options.everyMs ?? 3_600_000);
    this.timer.unref();
  }

  async sweep(): Promise<void> {
    try {
      const audit = await this.options.audit.prune(this.options.retentionDays);
      const logins = await this.options.pruneLoginFailures();
      if (audit + logins > 0) this.options.log.info({ audit, logins }, 'pruned old audit entries and login failures');
    } catch (err) {
      this.options.log.warn({ err }, 'audit retention sweep failed');
    }
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }
}
