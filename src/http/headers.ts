/**
 * Security headers on every response Fastify sends (routes, errors, 404s): no MIME sniffing, no
 * framing by another origin (the dashboard, served from this origin, may frame its own pages), no
 * Referer leaking URLs (tokens never travel in URLs, but ids do). A route that sets its own
 * Content-Security-Policy (the dashboard's strict one) keeps it. Four fixed headers need no
 * library (@fastify/helmet's default CSP would fight the dashboard's and the API docs' own).
 */
import type { FastifyInstance } from 'fastify';

export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'SAMEORIGIN',
  'referrer-policy': 'no-referrer',
};
export const DEFAULT_CSP = "frame-ancestors 'self'";

export function registerSecurityHeaders(app: FastifyInstance): void {
  app.addHook('onSend', (_request, reply, payload, done) => {
    reply.headers(SECURITY_HEADERS);
    if (!reply.hasHeader('content-security-policy')) reply.header('content-security-policy', DEFAULT_CSP);
    done(null, payload);
  });
}
