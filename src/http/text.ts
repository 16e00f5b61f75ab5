/**
 * Text the database cannot hold is bad input, refused before any route runs: a NUL character
 * (PostgreSQL text has none) or a lone UTF-16 surrogate (not Unicode; `"x\ud800y"` in JSON) in
 * any string or object key of the body, the query or the path; and a query string whose %-escapes
 * are not UTF-8 (`%ED%A0%80`, a surrogate encoded; `%FF`), which the query parser keeps as the
 * literal escape instead of decoding. One check, for every route: 400 `invalid_text` naming the
 * field, and nothing is written. (A body that is not UTF-8 is refused as it is parsed: json.ts.)
 */
import type { FastifyInstance } from 'fastify';
import { AppError, type FieldError } from '../lib/errors.js';
import { storableText, unstorableTextFlaw } from '../lib/text.js';

const flaw = unstorableTextFlaw;

const segment = (key: string | number) => String(key).replace(/~/g, '~0').replace(/\//g, '~1');

function isPlainObject(value: object): boolean {
  // JSON.parse makes Object.prototype ones; Fastify's query and path parameters are made by a
  // constructor whose prototype has no prototype itself.
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null || Object.getPrototypeOf(proto) === null;
}

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
    } else if (item !== null && typeof item === 'object' && isPlainObject(item)) {
      // Only what JSON parsing makes: a streamed body (the CSV import's) is not walked, its
      // object graph has cycles.
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

const utf8 = new TextDecoder('utf-8', { fatal: true });
const ESCAPES = /(?:%[0-9A-Fa-f]{2})+/g;

/** Whether every run of %-escapes in `part` (a key or value of a raw query string) decodes as UTF-8. */
function escapesAreUtf8(part: string): boolean {
  for (const [run] of part.matchAll(ESCAPES)) {
    try {
      utf8.decode(Buffer.from(run.replace(/%/g, ''), 'hex'));
    } catch {
      return false;
    }
  }
  return true;
}

/** The first key or value of the raw query string whose %-escapes are not UTF-8, as a field error. */
export function findNonUtf8Query(url: string): FieldError | undefined {
  const at = url.indexOf('?');
  if (at < 0) return undefined;
  for (const pair of url.slice(at + 1).split('&')) {
    const eq = pair.indexOf('=');
    const key = eq < 0 ? pair : pair.slice(0, eq);
    const value = eq < 0 ? '' : pair.slice(eq + 1);
    if (escapesAreUtf8(key) && escapesAreUtf8(value)) continue;
    let name: string;
    try {
      name = decodeURIComponent(key.replace(/\+/g, ' '));
    } catch {
      name = key;
    }
    const message = 'has %-escapes that are not UTF-8 (an encoded lone surrogate?), which cannot be stored';
    return { path: `/${segment(storableText(name))}`, message: escapesAreUtf8(key) ? message : `(the key) ${message}` };
  }
  return undefined;
}

export function registerTextChecks(app: FastifyInstance): void {
  app.addHook('preValidation', async (request) => {
    const query = findNonUtf8Query(request.url);
    if (query) throw new AppError(400, 'invalid_text', `Query: ${query.path} ${query.message}`, [query]);
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
