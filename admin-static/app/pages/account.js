// The signed-in admin's own account: change the password (POST /admin/api/account/password).
// The first-start banner of `tollgate serve` links here (#/account) to replace the generated password.
import { api } from '../api.js';
import { html, PageHeader, Card, Field, toast } from '../components.js';
import { useForm } from '../components/use-form.js';

const MIN_LENGTH = 12;
const EMPTY = { current_password: '', new_password: '', confirm: '' };

/** Field errors found before asking the server, or null. */
function checkLocally(v) {
  const errors = {};
  if (!v.current_password) errors.current_password = 'Enter your current password.';
  if (v.new_password.length < MIN_LENGTH) errors.new_password = `Use at least ${MIN_LENGTH} characters.`;
  if (v.confirm !== v.new_password) errors.confirm = 'The two new passwords differ.';
  return Object.keys(errors).length ? errors : null;
}

function PasswordForm() {
  const { values, setValues, errors, setErrors, formError, setFormError, busy, setBusy, set } = useForm(EMPTY);

  async function submit(e) {
    e.preventDefault();
    const local = checkLocally(values);
    setErrors(local ?? {});
    setFormError(null);
    if (local) return;
    setBusy(true);
    try {
      const result = await api('POST', '/account/password', { current_password: values.current_password, new_password: values.new_password });
      setValues(EMPTY);
      const others = result.other_sessions_ended;
      toast(others > 0 ? `Password changed. ${others} other session${others === 1 ? ' was' : 's were'} signed out.` : 'Password changed.', 'ok');
    } catch (error) {
      if (error.param === 'current_password' || error.param === 'new_password') setErrors({ [error.param]: error.message });
      else setFormError(error.message);
    } finally {
      setBusy(false);
    }
  }

  const input = (name, label, autocomplete, hint) => html`<${Field} label=${label} id=${`account-${name}`} error=${errors[name]} hint=${hint}>
    <input id=${`account-${name}`} name=${name} type="password" class="input" autocomplete=${autocomplete} value=${values[name]} onInput=${set(name)} />
  <//>`;

  return html`<form class="form account-form" onSubmit=${submit} noValidate>
    ${formError && html`<div class="alert" role="alert">${formError}</div>`}
    ${input('current_password', 'Current password', 'current-password')}
    ${input('new_password', 'New password', 'new-password', `At least ${MIN_LENGTH} characters.`)}
    ${input('confirm', 'Repeat the new password', 'new-password')}
    <div><button type="submit" class="btn btn-primary" disabled=${busy}>${busy ? 'Changing…' : 'Change password'}</button></div>
  </form>`;
}

/** Props: `me` (GET /me). */
export function AccountPage({ me }) {
  return html`<div class="page">
    <${PageHeader} title="Account" subtitle=${`Signed in as ${me.admin.username}.`} />
    <${Card} title="Change password">
      <p class="muted">Your other sessions are signed out; this one stays. From a shell: <code>tollgate admins passwd ${me.admin.username} --password-stdin</code>.</p>
      <${PasswordForm} />
    <//>
  </div>`;
}
