// The admin shell: who is signed in (GET /admin/api/session), the sidebar, the hash router and
// sign-out. Pages get {me, query} (+ route params) as props; any 401 brings back the login.
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api } from './api.js';
import { html, Spinner, ErrorBox, EmptyState, Toasts, toast } from './components.js';
import { LoginPage } from './pages/login.js';
import { DashboardPage } from './pages/dashboard.js';
import { LogsPage } from './pages/logs.js';
import { UsersPage } from './pages/users.js';
import { UserPage } from './pages/user.js';
import { PricingPage } from './pages/pricing.js';
import { AccountPage } from './pages/account.js';
import { UpstreamHealthPage } from './pages/upstream-health.js';
import { ReconciliationPage } from './pages/reconciliation.js';
import { AuditPage } from './pages/audit.js';

const ICONS = {
  dashboard: html`<svg viewBox="0 0 24 24" aria-hidden="true"><rect x="3" y="3" width="7" height="9" rx="1.5"/><rect x="14" y="3" width="7" height="5" rx="1.5"/><rect x="14" y="12" width="7" height="9" rx="1.5"/><rect x="3" y="16" width="7" height="5" rx="1.5"/></svg>`,
  users: html`<svg viewBox="0 0 24 24" aria-hidden="true"><circle cx="9" cy="8" r="3.5"/><path d="M2.5 20c.8-3.6 3.4-5.5 6.5-5.5s5.7 1.9 6.5 5.5"/><path d="M16 4.6a3.5 3.5 0 0 1 0 6.8M18 14.8c1.8.8 3 2.5 3.5 5.2"/></svg>`,
  logs: html`<svg viewBox="0 0 24 24" aria-hidden="true"><path d="M4 6h16M4 12h16M4 18h10"/></svg>`,
  health: html`<svg viewBox="0 0 24 24" aria-hidden="true"><path d="M3 12h4l2.5-6 5 12 2.5-6h4"/></svg>`,
  reconcile: html`<svg viewBox="0 0 24 24" aria-hidden="true"><path d="M4 7h11M4 12h16M4 17h11"/><path d="m17 5 2 2-2 2M17 15l2 2-2 2"/></svg>`,
  audit: html`<svg viewBox="0 0 24 24" aria-hidden="true"><path d="M12 3 4 6v6c0 4.5 3.4 8.2 8 9 4.6-.8 8-4.5 8-9V6z"/><path d="m9 12 2 2 4-4"/></svg>`,
  pricing: html`<svg viewBox="0 0 24 24" aria-hidden="true"><path d="M20.6 13.4 13.4 20.6a2 2 0 0 1-2.8 0L3 13V3h10l7.6 7.6a2 2 0 0 1 0 2.8Z"/><circle cx="7.5" cy="7.5" r="1.5"/></svg>`,
};

const NAV = [
  { href: '#/', label: 'Dashboard', icon: 'dashboard', match: (p) => p === '/' },
  { href: '#/users', label: 'Users', icon: 'users', match: (p) => p.startsWith('/users') },
  { href: '#/logs', label: 'Usage logs', icon: 'logs', match: (p) => p.startsWith('/logs') },
  { href: '#/pricing', label: 'Pricing', icon: 'pricing', match: (p) => p.startsWith('/pricing') },
  { href: '#/reconciliation', label: 'Reconciliation', icon: 'reconcile', match: (p) => p.startsWith('/reconciliation') },
  { href: '#/upstreams', label: 'Upstream health', icon: 'health', match: (p) => p.startsWith('/upstreams') },
  { href: '#/audit', label: 'Audit', icon: 'audit', match: (p) => p.startsWith('/audit') },
];

/** '#/logs?user_id=1' → { path: '/logs', query: { user_id: '1' } } */
function parseHash(hash) {
  const raw = (hash || '').replace(/^#/, '') || '/';
  const q = raw.indexOf('?');
  const path = (q === -1 ? raw : raw.slice(0, q)) || '/';
  const query = Object.fromEntries(new URLSearchParams(q === -1 ? '' : raw.slice(q + 1)));
  return { path: path.startsWith('/') ? path : `/${path}`, query };
}

function useHashRoute() {
  const [route, setRoute] = useState(() => parseHash(location.hash));
  useEffect(() => {
    const onChange = () => setRoute(parseHash(location.hash));
    window.addEventListener('hashchange', onChange);
    return () => window.removeEventListener('hashchange', onChange);
  }, []);
  return route;
}

function resolvePage(path) {
  if (path === '/' || path === '/dashboard') return { Page: DashboardPage, title: 'Dashboard', params: {} };
  if (path === '/users') return { Page: UsersPage, title: 'Users', params: {} };
  const user = /^\/users\/([^/]+)$/.exec(path);
  if (user) return { Page: UserPage, title: 'User', params: { id: decodeURIComponent(user[1]) } };
  if (path === '/logs') return { Page: LogsPage, title: 'Usage logs', params: {} };
  if (path === '/pricing') return { Page: PricingPage, title: 'Pricing', params: {} };
  if (path === '/reconciliation') return { Page: ReconciliationPage, title: 'Reconciliation', params: {} };
  if (path === '/upstreams') return { Page: UpstreamHealthPage, title: 'Upstream health', params: {} };
  if (path === '/audit') return { Page: AuditPage, title: 'Audit log', params: {} };
  if (path === '/account') return { Page: AccountPage, title: 'Account', params: {} };
  return { Page: NotFound, title: 'Not found', params: {} };
}

function NotFound() {
  return html`<div class="page"><div class="card">
    <${EmptyState} title="Page not found" hint="This address does not match any admin page."
      action=${html`<a class="btn" href="#/">Go to the dashboard</a>`} />
  </div></div>`;
}

function Sidebar({ me, path, onSignOut }) {
  const name = me.admin.username;
  return html`<aside class="sidebar">
    <a class="brand" href="#/">
      <img src="/admin/favicon.svg" alt="" width="28" height="28" />
      <span><span class="brand-name">Tollgate</span><span class="brand-sub">LLM gateway admin</span></span>
    </a>
    <nav class="nav" aria-label="Main">
      ${NAV.map((item) => html`<a href=${item.href} aria-current=${item.match(path) ? 'page' : undefined}>
        ${ICONS[item.icon]}<span>${item.label}</span></a>`)}
    </nav>
    <div class="sidebar-foot">
      <a class="who" href="#/account" title="Account: change your password" aria-current=${path === '/account' ? 'page' : undefined}>
        <span class="avatar" aria-hidden="true">${name.slice(0, 1).toUpperCase()}</span>
        <span class="who-text">
          <span class="who-name" data-testid="admin-username">${name}</span>
          <span class="who-meta">Account${me.gateway?.version ? ` · v${me.gateway.version}` : ''}</span>
        </span>
      </a>
      <button type="button" class="btn btn-sm" onClick=${onSignOut}>Sign out</button>
    </div>
  </aside>`;
}

function App() {
  // auth: 'loading' | 'anon' | 'error' | 'in'
  const [auth, setAuth] = useState({ state: 'loading', me: null, error: null });
  // How one may sign in (GET /session's sign_in): the password form, a single sign-on button, or both.
  const [signIn, setSignIn] = useState(null);
  const route = useHashRoute();

  // GET /session, not /me: it answers 200 without a session too, so a signed-out browser logs no
  // 401 in its console (a fetch cannot keep Chromium from reporting one).
  async function loadMe() {
    setAuth((a) => ({ ...a, state: a.me ? a.state : 'loading', error: null }));
    try {
      const me = await api('GET', '/session');
      setSignIn(me.sign_in ?? null);
      setAuth(me.admin ? { state: 'in', me, error: null } : { state: 'anon', me: null, error: null });
    } catch (error) {
      setAuth(error.status === 401 ? { state: 'anon', me: null, error: null } : { state: 'error', me: null, error });
    }
  }

  useEffect(() => {
    loadMe();
    const onUnauthorized = () => setAuth({ state: 'anon', me: null, error: null });
    window.addEventListener('tollgate:unauthorized', onUnauthorized);
    return () => window.removeEventListener('tollgate:unauthorized', onUnauthorized);
  }, []);

  const { Page, title, params } = resolvePage(route.path);
  useEffect(() => {
    document.title = auth.state === 'in' ? `${title} · Tollgate` : 'Sign in · Tollgate';
  }, [title, auth.state]);

  async function signOut() {
    try {
      const out = await api('POST', '/logout');
      // Signed in through the identity provider: end that session too, on its own logout page.
      if (out && out.end_session_url) {
        window.location.assign(out.end_session_url);
        return;
      }
    } catch (error) {
      if (error.status !== 401) toast(`Sign out failed: ${error.message}`, 'err');
    }
    setAuth({ state: 'anon', me: null, error: null });
  }

  if (auth.state === 'loading') return html`<div class="boot"><${Spinner} label="Loading Tollgate…" /></div>`;
  if (auth.state === 'error') {
    return html`<div class="login"><div class="login-card"><${ErrorBox} error=${auth.error} onRetry=${loadMe} /></div></div>`;
  }
  if (auth.state === 'anon') return html`<${LoginPage} onSignedIn=${loadMe} signIn=${signIn} /><${Toasts} />`;
  const pageKey = Page === UserPage ? `user-${params.id}` : route.path;
  return html`<div class="shell">
    <${Sidebar} me=${auth.me} path=${route.path} onSignOut=${signOut} />
    <main class="main" id="main">
      <${Page} key=${pageKey} me=${auth.me} query=${route.query} ...${params} />
    </main>
    <${Toasts} />
  </div>`;
}

render(html`<${App} />`, document.getElementById('app'));
