/**
 * Request limits (@fastify/rate-limit), per minute, in one place:
 * - an authenticated request counts against its principal (a user or an s2s token), whatever its
 *   address; a request without one against its client address;
 * - POST /login (per address) and POST /s2s-token (per principal) have stricter limits of their own;
 * - routes marked `limit: 'none'` are not limited: provider callbacks (a provider's retries must
 *   not be refused), the health check; the media WebSocket is not a route and is not limited.
 * Every limited response carries x-ratelimit-limit, x-ratelimit-remaining and x-ratelimit-reset;
 * a refused one is a 429 problem with Retry-After. Counters live in each process's memory (behind
 * a load balancer each API process allows the limit). docs/security.md lists the defaults.
 */
import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { RateLimitSettings } from '../config/security.js';
import { AppError } from '../lib/errors.js';
import './types.js';

type LimitClass = 'none' | 'login' | 'token-issue' | 'principal' | 'address';

function classOf(request: FastifyRequest): LimitClass {
  const marked = request.routeOptions.config?.limit;
  if (marked) return marked;
  return request.principal ? 'principal' : 'address';
}

function perMinute(settings: RateLimitSettings, kind: LimitClass): number {
  switch (kind) {
    case 'none':
      return 0;
    case 'login':
      return settings.login;
    case 'token-issue':
      return settings.tokenIssue;
    case 'principal':
      return settings.perPrincipal;
    case 'address':
      return settings.perAddress;
  }
}

/** Registers the limits; call before any route is added (the plugin attaches to routes as they are). */
export async function registerRateLimits(app: FastifyInstance, settings: RateLimitSettings): Promise<void> {
  await app.register(rateLimit, {
    global: true,
    // Route-level onRequest hooks run after the app's own, so the auth hook has set the principal.
    hook: 'onRequest',
    timeWindow: 60_000,
    max: (request) => perMinute(settings, classOf(request)),
    allowList: (request) => perMinute(settings, classOf(request)) === 0,
    keyGenerator: (request) => {
      const kind = classOf(request);
      const who = kind !== 'login' && request.principal ? `${request.principal.kind}:${request.principal.id}` : request.ip;
      return `${kind}:${who}`;
    },
    errorResponseBuilder: (_request, context) =>
      new AppError(429, 'rate_limited', `Too many requests: at most ${context.max} a minute; try again in ${context.after}`, undefined, {
        retryAfterSeconds: Math.ceil(context.ttl / 1000),
      }),
  });
}
