import type { ValidationStatus } from './errors.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** No bearer token needed (login, health, docs, provider callbacks with their own checks). */
    public?: boolean;
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
}

export {};
