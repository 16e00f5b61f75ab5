/**
 * Text the database cannot hold is bad input, refused before any route runs: a NUL character
 * (PostgreSQL text has none) or a lone UTF-16 surrogate (not Unicode; `"x\ud800y"` in JSON) in
 * any string or object key of the body, the query or the path. One check, for every route: 400
 * `invalid_text` naming the field, and nothing is written.
 */
import type { FastifyInstance } from 'fastify';
import { AppError, type FieldError } from '../lib/errors.js';
import { unstorableTextFlaw } from '../lib/text.js';

const flaw = unstorableTextFlaw;

const segment = (key: string | number) => String(key).replace(/~/g, '~0').replace(/\//g, '~1');

/**
 * The first string (or key) in `value` that cannot be stored, as a field error; undefined when all
 * are fine. Walks without recursion, so a deeply nested body cannot exhaust the stack.
 */
export function findUnstorableText(value: unknown): FieldError | undefined {
  const stack: Array<[unknown, string]> = [[value, '']];
  while (stack.length > 0) {
    const [item, path] = stack.pop()!;
    if (typeof item === 'string') {
      const why = flaw(item);
      if (why) return { path: path || '/', message: why };
    } else if (Array.isArray(item)) {
      for (let i = item.length - 1; i >= 0; i--) stack.push([item[i], `${path}/${i}`]);
    } else if (item !== null && typeof item === 'object') {
      const entries = Object.entries(item);
      for (let i = entries.length - 1; i >= 0; i--) {
        const [key, child] = entries[i]!;
        const at = `${path}/${segment(key)}`;
        const why = flaw(key);
        if (why) return { path: at, message: `(the key) ${why}` };
        stack.push([child, at]);
      }
    }
  }
  return undefined;
}

const PARTS = [
  ['body', 'Request body'],
  ['query', 'Query'],
  ['params', 'Path'],
] as const;

export function registerTextChecks(app: FastifyInstance): void {
  app.addHook('preValidation', async (request) => {
    for (const [part, label] of PARTS) {
      const found = findUnstorableText(request[part]);
      if (found) {
        // As schema errors name them: `/payload/name` in the body, `/name` in the query or path.
        const path = found.path === '/' && part !== 'body' ? `/${part}` : found.path;
        throw new AppError(400, 'invalid_text', `${label}: ${path} ${found.message}`, [{ path, message: found.message }]);
      }
    }
  });
}
