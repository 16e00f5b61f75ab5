/**
 * The dashboard's entry: restores the session, then routes. Each screen is its own chunk, loaded
 * the first time it is shown; the shell (navigation, banners) and the login page come with this one.
 */
import './styles.css';
import { render } from 'preact';
import { useEffect } from 'preact/hooks';
import { ErrorBoundary, LocationProvider, Route, Router, lazy, useLocation } from 'preact-iso';
import { Shell } from './components/shell.js';
import { LoginPage } from './pages/login.js';
import { BASE, restore, session } from './session.js';
import { useStore } from './lib/store.js';
import { NotFound, PageHeader, Empty } from './components/ui.js';
import type { ComponentType } from 'preact';
import { can } from './session.js';

/**
 * A screen the role may see (its resource's read permission, from GET /me), loaded when first
 * shown; for any other role, a plain page saying so: nobody learns of a permission from a 403.
 */
function screen<P>(resource: string, load: () => Promise<{ default: ComponentType<P> }>): ComponentType<P> {
  const Page = lazy(load);
  return (props: P) =>
    can(resource, 'read') ? (
      <Page {...(props as P & object)} />
    ) : (
      <div>
        <PageHeader title="Not available" />
        <Empty>This screen is not available to your role.</Empty>
      </div>
    );
}

const Overview = screen('leads', () => import('./pages/overview.js'));
const Leads = screen('leads', () => import('./pages/leads.js'));
const LeadPage = screen<{ id: string }>('leads', () => import('./pages/lead.js'));
const Templates = screen('templates', () => import('./pages/templates.js'));
const TemplatePage = screen<{ id: string }>('templates', () => import('./pages/template.js'));
const Configurations = screen('configurations', () => import('./pages/configurations.js'));
const Numbers = screen('numbers', () => import('./pages/numbers.js'));
const Trunks = screen('trunks', () => import('./pages/trunks.js'));
const Blacklist = screen('blacklist', () => import('./pages/blacklist.js'));
const DncLists = screen('dnc_lists', () => import('./pages/dnc-lists.js'));
const Knowledge = screen('knowledge', () => import('./pages/knowledge.js'));
const Privacy = screen('privacy', () => import('./pages/privacy.js'));
const Merchants = screen('merchants', () => import('./pages/merchants.js'));
const Users = screen('users', () => import('./pages/users.js'));
const Tokens = screen('tokens', () => import('./pages/tokens.js'));
const Resellers = screen('resellers', () => import('./pages/resellers.js'));
const Analytics = screen('analytics', () => import('./pages/analytics.js'));
const Audit = screen('audit', () => import('./pages/audit.js'));
const Campaigns = screen('campaigns', () => import('./pages/campaigns.js'));
const CampaignPage = screen<{ id: string }>('campaigns', () => import('./pages/campaign.js'));

function App() {
  const s = useStore(session);
  const { path, url, route } = useLocation();
  const onLogin = path === `${BASE}/login`;
  useEffect(() => {
    // Not logged in: to the login page, remembering where the person was going.
    if (s === null && !onLogin) route(`${BASE}/login?next=${encodeURIComponent(url)}`, true);
  }, [s, onLogin, url]);
  if (s === undefined) return <p class="boot">Loading…</p>;
  if (s === null || onLogin) return <LoginPage />;
  return (
    <Shell>
      <ErrorBoundary>
        <Router>
          <Route path={`${BASE}`} component={Overview} />
          <Route path={`${BASE}/leads`} component={Leads} />
          <Route path={`${BASE}/leads/:id`} component={LeadPage} />
          <Route path={`${BASE}/campaigns`} component={Campaigns} />
          <Route path={`${BASE}/campaigns/:id`} component={CampaignPage} />
          <Route path={`${BASE}/templates`} component={Templates} />
          <Route path={`${BASE}/templates/:id`} component={TemplatePage} />
          <Route path={`${BASE}/configurations`} component={Configurations} />
          <Route path={`${BASE}/numbers`} component={Numbers} />
          <Route path={`${BASE}/trunks`} component={Trunks} />
          <Route path={`${BASE}/blacklist`} component={Blacklist} />
          <Route path={`${BASE}/dnc-lists`} component={DncLists} />
          <Route path={`${BASE}/knowledge`} component={Knowledge} />
          <Route path={`${BASE}/privacy`} component={Privacy} />
          <Route path={`${BASE}/merchants`} component={Merchants} />
          <Route path={`${BASE}/users`} component={Users} />
          <Route path={`${BASE}/tokens`} component={Tokens} />
          <Route path={`${BASE}/resellers`} component={Resellers} />
          <Route path={`${BASE}/analytics`} component={Analytics} />
          <Route path={`${BASE}/audit`} component={Audit} />
          <Route default component={NotFound} />
        </Router>
      </ErrorBoundary>
    </Shell>
  );
}

render(
  <LocationProvider scope={BASE}>
    <App />
  </LocationProvider>,
  document.getElementById('app')!,
);
void restore();
