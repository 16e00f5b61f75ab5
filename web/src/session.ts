/**
 * The login session: the bearer token lives in memory and in this tab's session storage (never a
 * cookie, never local storage), with its expiry. When it expires, or the API answers 401, the
 * person is sent to log in and then back to the page they were on.
 */
import { ApiError, http, setToken, whenUnauthorized } from './api/client.js';
import type { LoginResponse, Me } from './api/types.js';
import { store } from './lib/store.js';

const KEY = 'dialer.session';
export const BASE = document.querySelector<HTMLMetaElement>('meta[name="dialer-base"]')?.content ?? '/agent/voice/dialer/app';

export interface Session {
  token: string;
  expiresAt: number;
  email: string;
  me: Me;
}

/** undefined: not known yet (reading the stored session); null: logged out. */
export const session = store<Session | null | undefined>(undefined);
/** Why the login page is shown (an expired session says so). */
export const loginNotice = store<string | undefined>(undefined);

let expiryTimer: ReturnType<typeof setTimeout> | undefined;

function start(s: Session): void {
  setToken(s.token);
  sessionStorage.setItem(KEY, JSON.stringify({ token: s.token, expiresAt: s.expiresAt, email: s.email }));
  clearTimeout(expiryTimer);
  // setTimeout's limit is ~24.8 days; a token lives an hour by default.
  expiryTimer = setTimeout(() => expire('Your session expired. Log in again to continue where you were.'), Math.min(s.expiresAt - Date.now(), 2 ** 31 - 1));
  session.set(s);
}

export async function login(email: string, password: string): Promise<void> {
  const res = await http.post<LoginResponse>('/login', { email, password });
  setToken(res.access_token);
  const me = await http.get<Me>('/me');
  start({ token: res.access_token, expiresAt: Date.now() + res.expires_in * 1000, email: res.user.email, me });
}

export function logout(): void {
  end();
  loginNotice.set('You are logged out.');
  go(`${BASE}/login`);
}

function end(): void {
  clearTimeout(expiryTimer);
  setToken(undefined);
  sessionStorage.removeItem(KEY);
  session.set(null);
}

/** Where to come back to after logging in again. */
export function currentPlace(): string {
  return location.pathname.startsWith(`${BASE}/login`) ? `${BASE}/` : `${location.pathname}${location.search}`;
}

export function expire(notice: string): void {
  if (!session.get()) return;
  const back = currentPlace();
  end();
  loginNotice.set(notice);
  go(`${BASE}/login?next=${encodeURIComponent(back)}`);
}

/** Client-side navigation (the router listens to history changes). */
export function go(path: string, replace = false): void {
  if (replace) history.replaceState(null, '', path);
  else history.pushState(null, '', path);
  dispatchEvent(new PopStateEvent('popstate'));
}

/** Restores the tab's session, if it is still valid. */
export async function restore(): Promise<void> {
  whenUnauthorized(() => expire('Your session expired. Log in again to continue where you were.'));
  const raw = sessionStorage.getItem(KEY);
  if (!raw) return session.set(null);
  try {
    const saved = JSON.parse(raw) as { token: string; expiresAt: number; email: string };
    if (saved.expiresAt <= Date.now()) {
      sessionStorage.removeItem(KEY);
      loginNotice.set('Your session expired. Log in again to continue where you were.');
      return session.set(null);
    }
    setToken(saved.token);
    const me = await http.get<Me>('/me');
    start({ ...saved, me });
  } catch (err) {
    // A token the API no longer accepts (expired, its user deleted): log in again, and come back here.
    if (err instanceof ApiError && err.status === 401) loginNotice.set('Your session expired. Log in again to continue where you were.');
    end();
  }
}

/** What the role may do, from GET /me (the server's permission matrix). */
export function can(resource: string, action: 'read' | 'write'): boolean {
  return session.get()?.me.permissions[resource]?.[action] === true;
}
