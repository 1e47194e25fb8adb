// The shared UI kit (names fixed by ui.md). Split into small modules under ./components/.
export { html } from './components/html.js';
export { PageHeader, Card, Spinner, ErrorBox, EmptyState, Field, Badge, SpendBar, Pager } from './components/basic.js';
export { Modal, ConfirmDialog } from './components/modal.js';
export { CopyButton } from './components/copy.js';
export { toast, Toasts } from './components/toast.js';
export { useAsync } from './components/use-async.js';
export {
  formatUsd, formatNumber, formatCompact, formatPercent, formatDate, formatDateTime, formatDateTimeIn, formatDateIn, formatRelative, formatMs,
} from './components/format.js';
