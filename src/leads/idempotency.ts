/**
 * Terminology
 * - idempotency key: the optional `Idempotency-Key` header of POST /leads and POST /leads/batch.
 *   Within 24 hours of its first use, a request with the same key and the same body gets the first
 *   answer again (same status, same body, `Idempotent-Replayed: true`) and queues nothing; the same
 *   key with another body is `409 idempotency_key_reused`. Keys belong to the principal (the user
 *   or s2s token) that sent them. Without the header nothing of this applies.
 * - claim: the row a keyed request takes before it runs. A second request with the key while the
 *   first is under way is answered `409 idempotency_key_in_use` with Retry-After (it does not wait).
 * - answer: written in the transaction that queues the leads, so a key is never answered without
 *   its leads nor leads queued without the key's answer. A refusal (4xx) is kept as the answer too;
 *   a failure (5xx: nothing was queued) gives the claim up, so the retry runs again.
 */
import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { Principal } from '../auth/index.js';
import type { Queryable } from '../db/index.js';
import { requestBodyBytes } from '../http/index.js';
import { AppError } from '../lib/errors.js';
import { newId } from '../lib/ids.js';
import type { Logger } from '../lib/logger.js';
import { IdempotencyRepository } from './idempotency-repository.js';

export const IDEMPOTENCY_KEY_MAX_LENGTH = 255;
/** How long a key's first answer is kept (and the key may not be used for another body). */
const KEY_TTL_SECONDS = 24 * 3600;
/** A claim left unanswered this long belongs to a request that died (nothing of it was written). */
const ABANDONED_AFTER_SECONDS = 30;
/** Expired keys are deleted at most this often per process, by the keyed request that comes next. */
const PRUNE_EVERY_MS = 10 * 60_000;

/** The header as the OpenAPI document shows it and as requests are validated. */
export const IdempotencyHeaders = Type.Object({
  'idempotency-key': Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: IDEMPOTENCY_KEY_MAX_LENGTH,
      pattern: '^[\\x20-\\x7E]+$',
      description:
        'Optional. A key of your choice (1 to 255 printable ASCII characters; a UUID suits) that makes a retry safe: within 24 hours the same key and the same body ' +
        'answer the first answer again (Idempotent-Replayed: true) and queue nothing; the same key with another body is 409 idempotency_key_reused; ' +
        'while the first request is under way, 409 idempotency_key_in_use with Retry-After. Keys are per user or s2s token.',
    }),
  ),
});

/** What a keyed request's handler hands the service: records the answer in the write's transaction. */
export type RecordAnswer = (q: Queryable, answer: unknown) => Promise<void>;

interface Claim {
  scope: string;
  key: string;
  token: string;
}

const scopeOf = (p: Principal) => `${p.kind}:${p.id}`;

function fingerprintOf(request: FastifyRequest): string {
  const hash = createHash('sha256').update(`${request.method} ${request.routeOptions.url ?? request.url}\n`);
  hash.update(requestBodyBytes(request) ?? JSON.stringify(request.body ?? null));
  return hash.digest('base64url');
}

const reused = (key: string) =>
  new AppError(409, 'idempotency_key_reused', `Idempotency-Key ${JSON.stringify(key)} was used with another request body in the last 24 hours; send a new request with a new key`, [
    { path: '/idempotency-key', message: 'was used with another request body' },
  ]);

const inUse = (key: string) =>
  new AppError(409, 'idempotency_key_in_use', `A request with Idempotency-Key ${JSON.stringify(key)} is under way; retry when it has been answered`, undefined, {
    retryAfterSeconds: 1,
  });

/** Idempotency keys for the push routes: their hooks and the answer their handlers record. */
export class IdempotencyKeys {
  private readonly repo: IdempotencyRepository;
  private readonly claims = new WeakMap<FastifyRequest, Claim>();
  private lastPruneMs = 0;

  constructor(
    db: Queryable,
    private readonly log: Logger,
  ) {
    this.repo = new IdempotencyRepository(db);
  }

  /** Route hooks: claim the key (or answer from it) before the handler, keep or give up the claim after. */
  readonly hooks = {
    preHandler: async (request: FastifyRequest, reply: FastifyReply) => {
      const key = request.headers['idempotency-key'];
      if (typeof key !== 'string' || !request.principal) return;
      this.prune();
      const scope = scopeOf(request.principal);
      const fingerprint = fingerprintOf(request);
      const token = newId();
      for (let tries = 0; tries < 3; tries++) {
        const held = await this.repo.claim(scope, key, fingerprint, token, KEY_TTL_SECONDS, ABANDONED_AFTER_SECONDS);
        if (!held) continue;
        if (held.kind === 'claimed') return void this.claims.set(request, { scope, key, token });
        if (held.fingerprint !== fingerprint) throw reused(key);
        if (held.kind === 'under_way') throw inUse(key);
        const { answer } = held;
        // Sent through the route's serializer as the first answer was: the same bytes again.
        return reply.code(answer.status).type(answer.type).header('idempotent-replayed', 'true').send(JSON.parse(answer.body));
      }
      throw inUse(key);
    },
    onSend: async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
      const claim = this.claims.get(request);
      if (!claim) return payload;
      this.claims.delete(request);
      const status = reply.statusCode;
      try {
        if (status >= 500) await this.repo.release(claim.scope, claim.key, claim.token);
        // A refusal is the key's answer; a success was answered with its write (this finds it answered).
        else if (typeof payload === 'string') {
          await this.repo.answer(claim.scope, claim.key, claim.token, { status, type: String(reply.getHeader('content-type') ?? 'application/json'), body: payload });
        }
      } catch (err) {
        // The claim stays unanswered: after ABANDONED_AFTER_SECONDS a retry runs again, which is
        // safe, since this request wrote nothing that answers it.
        this.log.warn({ err, status }, 'idempotency key not settled');
      }
      return payload;
    },
  };

  /** The answer a keyed request records with its write (undefined without a key). */
  recorder(request: FastifyRequest, status: number): RecordAnswer | undefined {
    const claim = this.claims.get(request);
    if (!claim) return undefined;
    return async (q, answer) => {
      const mine = await this.repo.answer(claim.scope, claim.key, claim.token, { status, type: 'application/json; charset=utf-8', body: JSON.stringify(answer) }, q);
      if (!mine) throw inUse(claim.key);
    };
  }

  /** Deletes keys past their 24 hours, now and then (a keyed request starts it; it is not awaited). */
  private prune(): void {
    if (Date.now() - this.lastPruneMs < PRUNE_EVERY_MS) return;
    this.lastPruneMs = Date.now();
    this.repo.prune(KEY_TTL_SECONDS).catch((err: unknown) => this.log.warn({ err }, 'pruning expired idempotency keys failed'));
  }
}
