/**
 * One gateway user: budget and limits, edit and delete, API keys, provider credentials.
 * An unknown id (404) shows a not-found state with the way back to Users.
 */
import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { html, PageHeader, Spinner, ErrorBox, EmptyState, ConfirmDialog, useAsync, toast, formatDate } from '../components.js';
import { UserFormModal } from './users/user-form.js';
import { SummaryCard } from './user/summary-card.js';
import { KeysCard } from './user/keys-card.js';
import { CredentialsCard } from './user/credentials-card.js';

function Breadcrumb({ name }) {
  return html`<nav class="breadcrumb" aria-label="Breadcrumb"><a href="#/users">Users</a><span aria-hidden="true"> / </span><span>${name}</span></nav>`;
}

function NotFound({ id }) {
  return html`<div class="page">
    <${Breadcrumb} name="Not found" />
    <div class="card">
      <${EmptyState}
        icon="?"
        title="User not found"
        hint=${`There is no gateway user with id ${id}. It may have been deleted; its request history is still in the usage logs.`}
        action=${html`<a class="btn btn-primary" href="#/users">Back to Users</a>`}
      />
    </div>
  </div>`;
}

/** Props: `id` (route parameter, a string), `me` (GET /me, from the shell: the configured providers). */
export function UserPage({ id, me }) {
  const { data: user, error, reload } = useAsync(() => api('GET', `/users/${encodeURIComponent(id)}`), [id]);
  const [editing, setEditing] = useState(false);
  const [deleting, setDeleting] = useState(false);

  if (error && (error.status === 404 || (error.status === 400 && error.param === 'id'))) return html`<${NotFound} id=${id} />`;
  if (error && !user) return html`<div class="page"><${Breadcrumb} name=${`User ${id}`} /><${ErrorBox} error=${error} onRetry=${reload} /></div>`;
  if (!user) return html`<div class="page"><${Spinner} label="Loading user…" /></div>`;

  async function remove() {
    await api('DELETE', `/users/${user.id}`);
    toast(`User ${user.name} deleted`);
    location.hash = '#/users';
  }

  function onSaved(saved) {
    setEditing(false);
    toast(`Saved ${saved.name}`);
    reload();
  }

  const subtitle = html`${user.email ? html`<span>${user.email}</span><span aria-hidden="true"> · </span>` : ''}<span>User #${user.id}, created ${formatDate(user.created_at)}</span>${user.disabled ? html`<span aria-hidden="true"> · </span><span class="tone-warn">disabled: its keys are refused</span>` : ''}`;
  const actions = html`
    <button type="button" class="btn" onClick=${() => setEditing(true)}>Edit user</button>
    <button type="button" class="btn btn-danger" onClick=${() => setDeleting(true)}>Delete user</button>`;

  return html`<div class="page">
    <${Breadcrumb} name=${user.name} />
    <${PageHeader} title=${user.name} subtitle=${subtitle} actions=${actions} />
    ${error && html`<${ErrorBox} error=${error} onRetry=${reload} />`}
    <div class="stack">
      <${SummaryCard} user=${user} timeZone=${me?.gateway?.time_zone} />
      <${KeysCard} userId=${user.id} onChanged=${reload} />
      <${CredentialsCard} userId=${user.id} userName=${user.name} providers=${me?.gateway?.providers} />
    </div>
    ${editing && html`<${UserFormModal} user=${user} onClose=${() => setEditing(false)} onSaved=${onSaved} />`}
    ${deleting &&
    html`<${ConfirmDialog}
      title=${`Delete ${user.name}?`}
      message=${html`<p>Its API keys stop working at once and its provider credentials are deleted.</p>
        <p>Its request history is kept: usage logs and the dashboard still count its requests and cost, shown as a deleted user.</p>`}
      confirmLabel="Delete user"
      danger
      onConfirm=${remove}
      onCancel=${() => setDeleting(false)}
    />`}
  </div>`;
}
