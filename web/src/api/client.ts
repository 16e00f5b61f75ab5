/**
 * The one way the dashboard talks to the API: JSON over fetch with the session's bearer token.
 * Errors arrive as problem details (ApiError keeps them, field paths included); a 401 ends the
 * session, which sends the person to log in and back to where they were.
 */
import type { Problem } from './types.js';

export const API = document.querySelector<HTMLMetaElement>('meta[name="dialer-base"]')?.content.replace(/\/app$/, '') ?? '/agent/voice/dialer';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly problem: Problem,
  ) {
    super(problem.detail || problem.title);
  }

  /** The message of the field at `path` (a JSON pointer such as `/flow/nodes/1/functions/0/transition_to`), if the API named it. */
  at(path: string): string | undefined {
    return this.problem.errors?.find((e) => e.path === path)?.message;
  }
}

type Query = Record<string, string | number | boolean | undefined | null>;

let token: string | undefined;
let onUnauthorized: () => void = () => {};

export function setToken(value: string | undefined): void {
  token = value;
}

export function getToken(): string | undefined {
  return token;
}

export function whenUnauthorized(handler: () => void): void {
  onUnauthorized = handler;
}

export function url(path: string, query?: Query): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined && v !== null && v !== '') params.set(k, String(v));
  const qs = params.toString();
  return `${API}${path}${qs ? `?${qs}` : ''}`;
}

export function headers(extra: Record<string, string> = {}): Record<string, string> {
  return { ...(token ? { authorization: `Bearer ${token}` } : {}), ...extra };
}

async function request<T>(method: string, path: string, options: { query?: Query; body?: unknown; signal?: AbortSignal } = {}): Promise<T> {
  let res: Response;
  try {
    res = await fetch(url(path, options.query), {
      method,
      headers: headers(options.body !== undefined ? { 'content-type': 'application/json' } : {}),
      body: options.body !== undefined ? JSON.stringify(options.body) : null,
      signal: options.signal ?? null,
    });
  } catch (err) {
    if ((err as Error).name === 'AbortError') throw err;
    throw new ApiError(0, { type: 'about:blank', title: 'Network error', status: 0, detail: 'Dialer cannot be reached. Check that it is running.', code: 'network' });
  }
  const type = res.headers.get('content-type') ?? '';
  const data: unknown = type.includes('json') ? await res.json() : await res.text();
  if (res.ok) return data as T;
  const problem: Problem =
    typeof data === 'object' && data !== null && 'status' in data
      ? (data as Problem)
      : { type: 'about:blank', title: res.statusText, status: res.status, detail: typeof data === 'string' && data ? data : res.statusText, code: 'http' };
  // Only a logged-in session can expire; a failed login is the login form's business.
  if (res.status === 401 && token && path !== '/login') onUnauthorized();
  throw new ApiError(res.status, problem);
}

export const http = {
  get: <T>(path: string, query?: Query, signal?: AbortSignal) => request<T>('GET', path, { query, ...(signal ? { signal } : {}) }),
  post: <T>(path: string, body?: unknown, query?: Query) => request<T>('POST', path, { body: body ?? {}, query }),
  put: <T>(path: string, body: unknown) => request<T>('PUT', path, { body }),
  delete: <T>(path: string, body?: unknown) => request<T>('DELETE', path, body === undefined ? {} : { body }),
};
