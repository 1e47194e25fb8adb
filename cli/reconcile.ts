/**
 * `tollgate reconcile [--from YYYY-MM-DD --to YYYY-MM-DD] [--provider ID]... [--json]`: compares the
 * ledger with the providers' own usage and cost reports (`core/reconcile/`), stores the run, sends
 * the manifest's webhook when a row is flagged, and prints the report. Default days: the manifest's
 * `reconciliation.lookbackDays` whole UTC days before today. Exit code 0 when nothing is flagged, 2
 * when a row is, 1 when a report could not be read (or on any error).
 */
import { Command } from 'commander';
import type { PluginRegistry } from '../core/manifest.ts';
import { loadKeyring, resolveDataDir } from '../core/store/data-dir.ts';
import { systemClock } from '../core/runtime/clock.ts';
import { dailyRange } from '../core/reconcile/reconcile-job.ts';
import { NoReportCredentialError, runReconciliation } from '../core/reconcile/reconcile-run.ts';
import type { DifferenceView, RunView } from '../core/reconcile/reconciliation-runs.ts';
import { addDataDirOption, withStore } from './context.ts';
import { loadManifest } from './manifest-source.ts';
import { CliError, printJson } from './output.ts';

interface ReconcileOptions {
  from?: string;
  to?: string;
  provider: string[];
  json?: boolean;
  config?: string;
  dataDir?: string;
}

function parseDay(value: string): string {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value) || Number.isNaN(Date.parse(`${value}T00:00:00Z`))) throw new CliError(`expected a day as YYYY-MM-DD, got "${value}"`);
  return value;
}

export function reconcileCommand(registry: PluginRegistry): Command {
  return addDataDirOption(new Command('reconcile').description("compare the ledger with the providers' own usage and cost reports (needs an admin credential: credentials set-admin)"))
    .option('--from <day>', 'first UTC day, YYYY-MM-DD (default: reconciliation.lookbackDays days ago)', parseDay)
    .option('--to <day>', 'last UTC day, YYYY-MM-DD, inclusive (default: yesterday)', parseDay)
    .option('--provider <id>', 'only this provider (repeatable; default: every provider with an admin credential)', (v: string, all: string[]) => [...all, v], [])
    .option('--config <path>', 'manifest, for its reconciliation settings (default: ./tollgate.json if present, else the built-in default)')
    .option('--json', 'print the run and its rows as JSON')
    .action(async (options: ReconcileOptions) => {
      const { manifest } = await loadManifest(options.config, registry);
      const settings = manifest.reconciliation;
      const fallback = dailyRange(systemClock(), settings.lookbackDays);
      const range = { fromDay: options.from ?? (options.to ? options.to : fallback.fromDay), toDay: options.to ?? fallback.toDay };
      if (range.fromDay > range.toDay) throw new CliError(`--from ${range.fromDay} is after --to ${range.toDay}`);
      const keyring = loadKeyring(resolveDataDir(options.dataDir));
      const run = await withStore(options, async (store) => {
        try {
          return await runReconciliation({ db: store.db, keyring, clock: systemClock }, settings, { range, providers: options.provider, trigger: 'cli' });
        } catch (err) {
          if (err instanceof NoReportCredentialError) throw new CliError(err.message);
          throw err;
        }
      });
      if (options.json) printJson(run);
      else process.stdout.write(formatReport(run));
      process.exitCode = run.state === 'failed' ? 1 : run.state === 'flagged' ? 2 : 0;
    });
}

/** USD with 4 decimals, for reading (the stored figures are exact nanos). */
function usdText(nanos: number | null): string {
  return nanos === null ? '-' : `$${(nanos / 1e9).toFixed(4)}`;
}

function tokens(side: { input_tokens: number; output_tokens: number }): string {
  return `${side.input_tokens}/${side.output_tokens}`;
}

/** The report as people read it: a header, one line per row, the causes of flagged rows, the totals. */
export function formatReport(run: RunView & { differences: DifferenceView[] }): string {
  const header = ['DAY', 'PROVIDER', 'MODEL', 'REQUESTS L/P', 'TOKENS IN/OUT LEDGER', 'TOKENS IN/OUT PROVIDER', 'COST LEDGER', 'COST PROVIDER', 'FLAG'];
  const rows = run.differences.map((d) => [
    d.day, d.provider, d.model || '(no model)', `${d.ledger.requests}/${d.report.requests ?? '-'}`,
    d.ledger.present ? tokens(d.ledger) : '-', d.report.present ? tokens(d.report) : '-',
    usdText(d.ledger.cost_nanos), usdText(d.report.cost_nanos), d.flagged ? 'FLAGGED' : 'ok',
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd() + '\n';
  let out = `Reconciliation run ${run.id}: ${run.from_day} to ${run.to_day}, ${run.providers.join(', ')}: ${run.state.toUpperCase()}\n`;
  out += run.differences.length === 0 ? '(no usage on either side)\n' : line(header) + rows.map(line).join('');
  for (const d of run.differences.filter((x) => x.flagged)) {
    for (const cause of d.causes) out += `  ${d.day} ${d.provider} ${d.model || '(no model)'}: ${cause.message}\n`;
  }
  out += `Total: ledger ${usdText(run.ledger_cost_nanos)}, provider ${usdText(run.report_cost_nanos)}; ${run.flagged_rows} row(s) flagged`;
  out += run.alert_state ? `; alert ${run.alert_state}\n` : '\n';
  if (run.error) out += `Error: ${run.error}\n`;
  return out;
}
