// Sign-in page. POST /admin/api/login sets the session cookie; the shell then loads /me. With single
// sign-on configured (GET /session's sign_in.sso), a "Sign in with <provider>" link goes to
// /admin/api/oidc/login, a full navigation that comes back to /admin/ signed in; the password form
// shows only while sign_in.password is on.
import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { html, Field } from '../components.js';

function loginMessage(error) {
  if (error.status === 429) return error.message || 'Too many attempts. Wait a few minutes and try again.';
  if (error.status === 401) return 'Wrong username or password.';
  return error.message;
}

/** @param {{onSignedIn: () => void, signIn?: {password: boolean, sso: {name: string, login_url: string} | null} | null}} props */
export function LoginPage({ onSignedIn, signIn }) {
  const sso = signIn?.sso ?? null;
  const passwordOn = signIn?.password ?? true;
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState(null);
  const [missing, setMissing] = useState({});
  const [busy, setBusy] = useState(false);

  async function submit(e) {
    e.preventDefault();
    const need = { username: !username.trim(), password: !password };
    setMissing(need);
    if (need.username || need.password) return;
    setBusy(true);
    setError(null);
    try {
      await api('POST', '/login', { username: username.trim(), password });
      onSignedIn();
    } catch (err) {
      setError(loginMessage(err));
      setPassword('');
      setBusy(false);
    }
  }

  return html`<div class="login">
    <main class="login-card">
      <div class="login-brand">
        <img src="/admin/favicon.svg" alt="" width="34" height="34" />
        <div><div class="brand-name">Tollgate</div><div class="brand-sub">LLM gateway admin</div></div>
      </div>
      <h1>Sign in</h1>
      <p class="login-sub">Manage users, keys, budgets and pricing.</p>
      ${sso && html`<a class="btn btn-primary sso-button" href=${sso.login_url}>Sign in with ${sso.name}</a>`}
      ${sso && passwordOn && html`<p class="login-sub">or with a local account:</p>`}
      ${passwordOn && html`<form class="form" onSubmit=${submit} noValidate>
        ${error && html`<div class="alert" role="alert">${error}</div>`}
        <${Field} label="Username" id="login-username" error=${missing.username ? 'Enter your username.' : null}>
          <input id="login-username" name="username" autocomplete="username" autofocus value=${username}
            onInput=${(e) => setUsername(e.currentTarget.value)} />
        <//>
        <${Field} label="Password" id="login-password" error=${missing.password ? 'Enter your password.' : null}>
          <input id="login-password" name="password" type="password" autocomplete="current-password" value=${password}
            onInput=${(e) => setPassword(e.currentTarget.value)} />
        <//>
        <button type="submit" class="btn btn-primary" disabled=${busy}>${busy ? 'Signing in…' : 'Sign in'}</button>
      </form>`}
      ${passwordOn && html`<p class="login-foot">No account? An operator creates one with <code>tollgate admins create</code>.</p>`}
    </main>
  </div>`;
}
