/**
 * Model pricing: the price list (searched in the browser), create / edit / delete, import from
 * the bundled dataset, the models seen in traffic without a price, and the cost calculator.
 * `#/pricing?model=x&provider=y` opens "New price" prefilled (the dashboard links here).
 */
import { useEffect, useMemo, useState } from 'preact/hooks';
import { api } from '../api.js';
import {
  html, PageHeader, Card, Spinner, ErrorBox, EmptyState, Badge, ConfirmDialog, Pager, useAsync, toast, formatNumber, formatDateTime,
} from '../components.js';
import { PriceFormModal } from './pricing/price-form.js';
import { CostCalculator } from './pricing/calculator.js';
import { RepriceCard } from './pricing/reprice.js';
import { UnpricedNotice } from './pricing/unpriced-notice.js';
import { formatPerMillion } from './pricing/format.js';

const SOURCE_TONE = { manual: 'info', import: 'muted', free: 'ok' };
const PAGE_SIZE = 50;

/** The prefill asked for in the hash (`?model=&provider=`), from the shell's parsed query or the URL. */
function prefillFrom(query) {
  const q = query ?? Object.fromEntries(new URLSearchParams(location.hash.split('?')[1] ?? ''));
  return q.model ? { model: q.model, provider: q.provider || '' } : null;
}

/** `prices` (sorted by model) with those of `providers` (or of no provider) first, each part still by model. */
function configuredFirst(prices, providers) {
  const configured = new Set(providers.map((p) => p.id));
  const mine = (p) => p.provider === null || p.provider === undefined || configured.has(p.provider);
  return [...prices.filter(mine), ...prices.filter((p) => !mine(p))];
}

function PriceRow({ p, onEdit, onDelete }) {
  return html`<tr data-testid="price-row">
    <td class="price-model">${p.model}</td>
    <td class="price-provider">${p.provider ?? 'any'}</td>
    <td class="num">${formatPerMillion(p.input_price_per_million)}</td>
    <td class="num">${formatPerMillion(p.output_price_per_million)}</td>
    <td class="num">${p.cached_input_price_per_million == null ? html`<span class="muted">—</span>` : formatPerMillion(p.cached_input_price_per_million)}</td>
    <td class="num">${p.cache_write_price_per_million == null ? html`<span class="muted">—</span>` : formatPerMillion(p.cache_write_price_per_million)}</td>
    <td title=${p.updated_at ? `Updated ${formatDateTime(p.updated_at)}` : undefined}><${Badge} tone=${SOURCE_TONE[p.source] ?? 'muted'}>${p.source}<//></td>
    <td class="actions">
      <button type="button" class="btn btn-sm" onClick=${() => onEdit(p)}>Edit</button>
      <button type="button" class="btn btn-sm btn-danger-ghost" onClick=${() => onDelete(p)}>Delete</button>
    </td>
  </tr>`;
}

function PriceTable({ rows, onEdit, onDelete }) {
  return html`<div class="table-wrap">
    <table class="table">
      <thead>
        <tr>
          <th scope="col">Model</th>
          <th scope="col">Provider</th>
          <th scope="col" class="num">Input $/M</th>
          <th scope="col" class="num">Output $/M</th>
          <th scope="col" class="num">Cached $/M</th>
          <th scope="col" class="num">Cache write $/M</th>
          <th scope="col">Source</th>
          <th scope="col" class="actions"><span class="sr-only">Actions</span></th>
        </tr>
      </thead>
      <tbody>${rows.map((p) => html`<${PriceRow} key=${p.model} p=${p} onEdit=${onEdit} onDelete=${onDelete} />`)}</tbody>
    </table>
  </div>`;
}

/** Props (from the shell): `me` (GET /me: providers), `query` (the hash query). */
export function PricingPage({ me, query }) {
  const { data, error, reload } = useAsync(() => api('GET', '/pricing'), []);
  const [search, setSearch] = useState('');
  const [form, setForm] = useState(() => (prefillFrom(query) ? { prefill: prefillFrom(query) } : null));
  const [deleting, setDeleting] = useState(null);
  const [importing, setImporting] = useState(false);
  // The page belongs to the search it was turned under: a new search starts on page one.
  const [paging, setPaging] = useState({ term: '', offset: 0 });
  const providers = me?.gateway?.providers ?? [];

  // A later link to #/pricing?model=… while this page is open opens the form too.
  const askedModel = query?.model ?? '';
  const askedProvider = query?.provider ?? '';
  useEffect(() => {
    if (askedModel) setForm({ prefill: { model: askedModel, provider: askedProvider } });
  }, [askedModel, askedProvider]);

  // The configured providers' prices first (and those for any provider): the dataset's other
  // providers (OpenRouter's hundreds of models) sort first by name otherwise.
  const prices = useMemo(() => configuredFirst(data?.data ?? [], providers), [data, providers]);
  const term = search.trim().toLowerCase();
  const shown = useMemo(
    () => (term ? prices.filter((p) => p.model.toLowerCase().includes(term) || (p.provider ?? '').toLowerCase().includes(term)) : prices),
    [prices, term],
  );
  const offset = paging.term === term && paging.offset < shown.length ? paging.offset : 0;
  const pageRows = shown.slice(offset, offset + PAGE_SIZE);
  const turn = (to) => setPaging({ term, offset: to });

  function closeForm() {
    setForm(null);
    // Drop ?model= from the address so a reload does not reopen the form.
    if (location.hash.includes('?')) history.replaceState(null, '', '#/pricing');
  }

  function onSaved(price) {
    closeForm();
    toast(`Price for ${price.model} saved`);
    reload();
  }

  async function remove() {
    const p = deleting;
    await api('DELETE', `/pricing/${encodeURIComponent(p.model)}`);
    setDeleting(null);
    toast(`Price for ${p.model} deleted`);
    reload();
  }

  async function importDataset() {
    setImporting(true);
    try {
      const r = await api('POST', '/pricing/import');
      toast(`Imported prices: ${formatNumber(r.inserted)} new, ${formatNumber(r.updated)} updated, ${formatNumber(r.kept_manual)} manual kept`);
      reload();
    } catch (err) {
      toast(`Import failed: ${err.message}`, 'err');
    } finally {
      setImporting(false);
    }
  }

  const newPrice = () => setForm({ prefill: null });
  const actions = html`
    <button type="button" class="btn" onClick=${importDataset} disabled=${importing}>${importing ? 'Importing…' : 'Import from dataset'}</button>
    <button type="button" class="btn btn-primary" onClick=${newPrice}>New price</button>`;

  let list;
  if (error && !data) list = html`<${ErrorBox} error=${error} onRetry=${reload} />`;
  else if (!data) list = html`<${Spinner} label="Loading prices…" />`;
  else if (prices.length === 0)
    list = html`<${EmptyState}
      title="No prices yet"
      hint="Without a price, requests cost $0 and budgets never fill. Import the bundled dataset of public list prices, or add a price by hand."
      action=${html`<div class="inline-row">
        <button type="button" class="btn btn-primary" onClick=${importDataset} disabled=${importing}>Import the dataset</button>
        <button type="button" class="btn" onClick=${newPrice}>Add a price by hand</button>
      </div>`}
    />`;
  else if (shown.length === 0)
    list = html`<${EmptyState} title=${`No prices match “${search.trim()}”`} hint="Search looks at model and provider names."
      action=${html`<button type="button" class="btn" onClick=${() => setSearch('')}>Clear search</button>`} />`;
  else
    list = html`<${PriceTable} rows=${pageRows} onEdit=${(price) => setForm({ price })} onDelete=${setDeleting} />
      ${shown.length > PAGE_SIZE &&
      html`<${Pager} hasPrev=${offset > 0} hasNext=${offset + PAGE_SIZE < shown.length}
        onPrev=${() => turn(Math.max(0, offset - PAGE_SIZE))} onNext=${() => turn(offset + PAGE_SIZE)}
        label=${`${formatNumber(offset + 1)}–${formatNumber(offset + pageRows.length)} of ${formatNumber(shown.length)}`} />`}`;

  return html`<div class="page">
    <${PageHeader}
      title="Pricing"
      subtitle="USD per million tokens. Every request is billed at these prices against its user's budget."
      actions=${actions}
    />
    <${UnpricedNotice} unpriced=${data?.unpriced} onSetPrice=${(prefill) => setForm({ prefill })} />
    <${CostCalculator} prices=${prices} providers=${providers} />
    <${RepriceCard} prices=${prices} />
    <${Card} title="Model prices" flush>
      <div class="toolbar">
        <label class="sr-only" for="pricing-search">Search models</label>
        <input id="pricing-search" class="input search-input" type="search" placeholder="Search models or providers"
          autocomplete="off" value=${search} onInput=${(e) => setSearch(e.currentTarget.value)} />
        ${data && html`<span class="muted toolbar-count">${term ? `${formatNumber(shown.length)} of ` : ''}${formatNumber(prices.length)} ${prices.length === 1 ? 'price' : 'prices'}</span>`}
      </div>
      ${error && data && html`<${ErrorBox} error=${error} onRetry=${reload} />`}
      ${list}
    <//>
    ${form &&
    html`<${PriceFormModal} price=${form.price} prefill=${form.prefill} providers=${providers} onClose=${closeForm} onSaved=${onSaved} />`}
    ${deleting &&
    html`<${ConfirmDialog}
      title=${`Delete the price of ${deleting.model}?`}
      message=${html`<p>Requests to <span class="mono">${deleting.model}</span> will cost $0 until it has a price again, and it will show as unpriced. Past requests keep their cost.</p>`}
      confirmLabel="Delete price"
      danger
      onConfirm=${remove}
      onCancel=${() => setDeleting(null)}
    />`}
  </div>`;
}
