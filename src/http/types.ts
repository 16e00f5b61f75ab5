import type { ValidationStatus } from './errors.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** No bearer token needed (login, health, docs, provider callbacks with their own checks). */
    public?: boolean;
    /** Status for schema-validation failures (default 400). */
    validationStatus?: ValidationStatus;
  }
}

export {};
