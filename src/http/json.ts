/**
 * JSON request bodies, decoded as strict UTF-8: bytes that are not UTF-8 (a Latin-1 "é", an
 * encoded surrogate, a truncated sequence) answer 400 `invalid_text` on every route, as text the
 * database cannot hold does (text.ts), where a lenient decoder would quietly store U+FFFD in their place. Parsing is otherwise Fastify's own
 * (its empty-body and malformed-JSON errors, its `__proto__` and `constructor` guards).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError } from '../lib/errors.js';

const utf8 = new TextDecoder('utf-8', { fatal: true });
const bytesOf = new WeakMap<FastifyRequest, Buffer>();

/** The body's bytes as they arrived (a JSON request's; undefined for any other). */
export function requestBodyBytes(request: FastifyRequest): Buffer | undefined {
  return bytesOf.get(request);
}

export function registerJsonBodies(app: FastifyInstance): void {
  const parse = app.getDefaultJsonParser(app.initialConfig.onProtoPoisoning ?? 'error', app.initialConfig.onConstructorPoisoning ?? 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    const bytes = body as Buffer;
    let text: string;
    try {
      text = utf8.decode(bytes);
    } catch {
      const message = 'is not valid UTF-8; send JSON encoded as UTF-8';
      return done(new AppError(400, 'invalid_text', `Request body: ${message}`, [{ path: '/', message }]), undefined);
    }
    bytesOf.set(request, bytes);
    parse(request, text, done);
  });
}
