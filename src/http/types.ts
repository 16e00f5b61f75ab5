import type { Principal } from '../auth/principal.js';
import type { Action, Resource } from '../auth/permissions.js';
import type { ValidationStatus } from './errors.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** No bearer token needed (login, health, docs, provider callbacks with their own checks). */
    public?: boolean;
    /** The permission-matrix cell this route needs; every non-public route names one (or is `authenticated`). */
    permission?: readonly [Resource, Action];
    /** Any valid bearer token, whatever its role (GET /me: what the caller is and may do). */
    authenticated?: boolean;
    /** Status for schema-validation failures (default 400). */
    validationStatus?: ValidationStatus;
  }
  interface FastifyRequest {
    /** The authenticated caller; set on every non-public route. */
    principal: Principal;
  }
}

export {};
