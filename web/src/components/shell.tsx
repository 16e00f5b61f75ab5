/**
 * The frame of every screen: navigation (only the screens the role may see, from GET /me), who is
 * logged in, log out, and the banners that must not be missed: the sandbox line, and anything
 * GET /health says keeps calls from being placed.
 */
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { API, http } from '../api/client.js';
import type { Health } from '../api/types.js';
import { useInterval, useLoad } from '../lib/use.js';
import { useStore } from '../lib/store.js';
import { BASE, can, logout, session } from '../session.js';
import { Banner, Toasts } from './ui.js';

interface NavItem {
  path: string;
  label: string;
  /** The permission-matrix resource whose read the screen needs. */
  resource: string;
}

export const NAV: NavItem[] = [
  { path: '', label: 'Overview', resource: 'leads' },
  { path: '/leads', label: 'Leads', resource: 'leads' },
  { path: '/campaigns', label: 'Campaigns', resource: 'campaigns' },
  { path: '/templates', label: 'Templates', resource: 'templates' },
  { path: '/configurations', label: 'Configurations', resource: 'configurations' },
  { path: '/analytics', label: 'Analytics', resource: 'analytics' },
  { path: '/numbers', label: 'Numbers', resource: 'numbers' },
  { path: '/trunks', label: 'SIP trunks', resource: 'trunks' },
  { path: '/blacklist', label: 'Blacklist', resource: 'blacklist' },
  { path: '/dnc-lists', label: 'Do-not-call lists', resource: 'dnc_lists' },
  { path: '/knowledge', label: 'Knowledge', resource: 'knowledge' },
  { path: '/privacy', label: 'Privacy', resource: 'privacy' },
  { path: '/merchants', label: 'Merchants', resource: 'merchants' },
  { path: '/users', label: 'Users', resource: 'users' },
  { path: '/tokens', label: 'API tokens', resource: 'tokens' },
  { path: '/resellers', label: 'Resellers', resource: 'resellers' },
  { path: '/audit', label: 'Audit trail', resource: 'audit' },
];

/** The latest GET /health, shared by the shell's banners and the screens that need it (sandbox). */
export let latestHealth: Health | undefined;

export function useHealth() {
  const health = useLoad((signal) => http.get<Health>('/health', undefined, signal), []);
  useInterval(health.reload, 15_000);
  if (health.data) latestHealth = health.data;
  return health;
}

export function Shell({ children }: { children: ComponentChildren }) {
  const s = useStore(session)!;
  const { path } = useLocation();
  const [menuOpen, setMenuOpen] = useState(false);
  const health = useHealth();
  const items = NAV.filter((n) => can(n.resource, 'read'));
  const active = (item: NavItem) => (item.path === '' ? path === BASE || path === `${BASE}/` : path === `${BASE}${item.path}` || path.startsWith(`${BASE}${item.path}/`));
  const h = health.data;
  return (
    <div class="shell">
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="topbar">
        <a class="brand" href={`${BASE}/`}>
          <img src={`${BASE}/assets/icon.svg`} alt="" width="26" height="26" />
          Dialer
        </a>
        <button type="button" class="menu-button" aria-expanded={menuOpen} aria-controls="nav" onClick={() => setMenuOpen(!menuOpen)}>
          Menu
        </button>
        <div class="who">
          <span class="who-label" title={s.me.label}>
            {s.me.label}
          </span>
          <span class="role-badge" data-role={s.me.role}>
            {s.me.role}
          </span>
          <button type="button" class="link-button" onClick={logout}>
            Log out
          </button>
        </div>
      </header>
      <nav id="nav" class={`sidenav ${menuOpen ? 'open' : ''}`} aria-label="Screens" onClick={() => setMenuOpen(false)}>
        <ul>
          {items.map((item) => (
            <li key={item.path}>
              <a href={`${BASE}${item.path}`} aria-current={active(item) ? 'page' : undefined}>
                {item.label}
              </a>
            </li>
          ))}
        </ul>
        <a class="docs-link" href={`${API}/docs`} target="_blank" rel="noopener">
          API reference ↗
        </a>
      </nav>
      <main id="main" class="content">
        {h?.sandbox?.enabled && (
          <Banner tone="sandbox" id="sandbox-banner">
            <strong>Sandbox line:</strong> calls on {h.sandbox.providers.join(', ')} reach a simulated customer inside Dialer. No phone rings.{' '}
            <details>
              <summary>More</summary>
              Nothing is charged. {h.sandbox.agent === 'greeter' && <>With no LLM configured, sandbox calls run the built-in greeter; set <code>LLM_BASE_URL</code> (and <code>LLM_API_KEY</code>) to run your templates. </>}
              Set a provider's credentials (<code>TWILIO_*</code>, <code>EXOTEL_*</code>, <code>PLIVO_*</code>) to call real phones on it; <code>DIALER_SANDBOX=false</code> turns the sandbox off.
            </details>
          </Banner>
        )}
        {h && !h.calls.ready && (
          <Banner tone="warn" id="health-banner">
            <strong>Calls are not being placed:</strong> {h.calls.reason ?? 'this process cannot carry calls'}. Leads wait until this is fixed.
          </Banner>
        )}
        {health.error && !h && (
          <Banner tone="bad" id="health-banner">
            Dialer's health check failed: {health.error.message}
          </Banner>
        )}
        {children}
      </main>
      <Toasts />
    </div>
  );
}
