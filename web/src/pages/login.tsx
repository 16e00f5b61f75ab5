import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { ApiError } from '../api/client.js';
import { useStore } from '../lib/store.js';
import { BASE, login, loginNotice } from '../session.js';

/** Where to go after logging in: the page the person was on, if it is one of the dashboard's. */
function nextPlace(query: Record<string, string>): string {
  const next = query.next ?? '';
  return next.startsWith(`${BASE}/`) && !next.startsWith(`${BASE}/login`) ? next : `${BASE}/`;
}

export function LoginPage() {
  const { query, route } = useLocation();
  const notice = useStore(loginNotice);
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    setBusy(true);
    setError(undefined);
    try {
      await login(String(form.get('email')), String(form.get('password')));
      loginNotice.set(undefined);
      route(nextPlace(query), true);
    } catch (err) {
      setError(err instanceof ApiError && err.status === 422 ? 'The email or password is incorrect.' : (err as Error).message);
    } finally {
      setBusy(false);
    }
  };
  return (
    <main class="login">
      <form class="login-card" onSubmit={submit}>
        <div class="login-brand">
          <img src={`${BASE}/assets/icon.svg`} alt="" width="40" height="40" />
          <div>
            <h1>Dialer</h1>
            <p>AI voice agents that call your customers</p>
          </div>
        </div>
        {notice && (
          <p class="notice" role="status">
            {notice}
          </p>
        )}
        <label class="field">
          <span class="field-label">Email</span>
          <input name="email" type="email" autocomplete="username" required autofocus />
        </label>
        <label class="field">
          <span class="field-label">Password</span>
          <input name="password" type="password" autocomplete="current-password" required />
        </label>
        {error && (
          <p class="error-note" role="alert">
            {error}
          </p>
        )}
        <button type="submit" class="primary" disabled={busy}>
          {busy ? 'Logging in…' : 'Log in'}
        </button>
        <p class="hint">
          First time? <code>npm start</code> printed the admin's email and password when it created them.
        </p>
      </form>
    </main>
  );
}
