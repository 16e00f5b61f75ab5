import type { Principal } from '../auth/principal.js';
import type { Action, Resource } from '../auth/permissions.js';
import type { ValidationStatus } from './errors.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** No bearer token needed (login, health, docs, provider callbacks with their own checks). */
    public?: boolean;
    /** The permission-matrix cell this route needs; every non-public route names one. */
    permission?: readonly [Resource, Action];
    /** Status for schema-validation failures (default 400). */
    validationStatus?: ValidationStatus;
    /**
     * Which request limit applies (rate-limit.ts): unset, the principal's or the address's;
     * `login` and `token-issue` their stricter own; `none` for provider callbacks and health.
     */
    limit?: 'none' | 'login' | 'token-issue';
    /**
     * The problem this route answers when the database cannot be reached (default 503
     * database_unavailable); a push answers its documented 500 lead_not_queued. Both carry Retry-After.
     */
    whenDatabaseDown?: 'lead_not_queued';
    /** The audit trail's name for what this write does (default by method: create, update, delete); `login` for POST /login. */
    audit?: string;
  }
  interface FastifyRequest {
    /** The authenticated caller; set on every non-public route. */
    principal: Principal;
  }
}

export {};
