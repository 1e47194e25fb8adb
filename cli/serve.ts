/** `tollgate serve`: start the gateway; SIGTERM/SIGINT drain and exit 0. */
import { Command } from 'commander';
import { startGateway } from '../core/gateway.ts';
import { resolveDataDir } from '../core/store/data-dir.ts';
import type { PluginRegistry } from '../core/manifest.ts';
import type { ProviderSummary } from '../core/services.ts';
import { loadManifest } from './manifest-source.ts';
import { addDataDirOption, parsePositiveInt } from './context.ts';
import { CliError } from './output.ts';

interface ServeOptions {
  config?: string;
  host?: string;
  port?: number;
  dataDir?: string;
}

/** A user's mistake in where to listen, as one line (`error: port 8787 is in use; ...`), or null. */
function listenError(err: unknown, port: number): CliError | null {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'EADDRINUSE') return new CliError(`port ${port} is in use; start with --port N`);
  if (code === 'EACCES') return new CliError(`port ${port} needs privileges this user lacks; start with --port N (above 1023)`);
  if (code === 'EADDRNOTAVAIL') return new CliError(`this machine has no address ${(err as { address?: string }).address ?? ''} to listen on; start with --host 127.0.0.1`);
  return null;
}

/** How the banner says who can use a provider (`ProviderSummary.sharedKey`). */
const SHARED_KEY_LABELS: Record<ProviderSummary['sharedKey'], string> = {
  configured: 'shared key',
  missing: "no key: users' own keys only",
  not_needed: 'no key needed',
};

/** `openai (shared key), anthropic (no key: users' own keys only), ollama (no key needed)`. */
function providersLine(providers: readonly ProviderSummary[]): string {
  if (providers.length === 0) return 'none (list them in the provider-router\'s "providers" in the manifest)';
  return providers.map((p) => `${p.id} (${SHARED_KEY_LABELS[p.sharedKey]})`).join(', ');
}

export function serveCommand(registry: PluginRegistry): Command {
  return addDataDirOption(new Command('serve').description('start the gateway'))
    .option('--config <path>', 'manifest (default: ./tollgate.json if present, else the built-in default)')
    .option('--host <host>', 'interface to listen on (overrides the manifest)')
    .option('--port <n>', 'port to listen on, 0 for any free one (overrides the manifest)', (v: string) => (v === '0' ? 0 : parsePositiveInt('--port')(v)))
    .action(async (options: ServeOptions) => {
      const { manifest, source, registry: plugins } = await loadManifest(options.config, registry);
      const dataDir = resolveDataDir(options.dataDir);
      const port = options.port ?? manifest.server.port;
      const gateway = await startGateway({ manifest, registry: plugins, dataDir, host: options.host, port }).catch((err: unknown) => {
        throw listenError(err, port) ?? err;
      });
      const lines = [
        `Tollgate is listening on ${gateway.origin}`,
        `  API base URL: ${gateway.origin}/api/v1`,
        ...(manifest.admin.enabled ? [`  Admin UI:     ${gateway.origin}/admin/`] : []),
        `  API docs:     ${gateway.origin}/api/docs`,
        `  Metrics:      ${gateway.origin}/metrics`,
        `  Health:       ${gateway.origin}/healthz`,
        `  Manifest:     ${source}`,
        `  Data dir:     ${dataDir}`,
        // The SQLite file, or the PostgreSQL URL without its password (`store.location`).
        `  Database:     ${gateway.store.location}`,
        `  Providers:    ${providersLine(gateway.providers)}`,
      ];
      if (process.env.TOLLGATE_RUNNING_FROM) lines.push(`  Running:      ${process.env.TOLLGATE_RUNNING_FROM}`);
      const admin = gateway.bootstrapAdmin;
      if (admin?.generated) {
        lines.push(
          `Created admin "${admin.username}" with password ${admin.password} (shown once).`,
          `  Change it at ${gateway.origin}/admin/#/account or with \`tollgate admins passwd ${admin.username} --password-stdin\`.`,
        );
      }
      else if (admin) lines.push(`Created admin "${admin.username}" with the password from TOLLGATE_ADMIN_PASSWORD.`);
      const out = (line: string) => process.stdout.write(line + '\n');

      let stopping = false;
      const stop = (signal: NodeJS.Signals) => {
        if (stopping) {
          process.stderr.write(`Received ${signal} again: exiting without draining.\n`);
          process.exit(1);
        }
        stopping = true;
        out(`Received ${signal}: draining in-flight requests, then exiting.`);
        gateway.close().then(
          () => {
            out('Tollgate stopped.');
            process.exit(0);
          },
          (err: unknown) => {
            process.stderr.write(`shutdown failed: ${(err as Error).stack ?? String(err)}\n`);
            process.exit(1);
          },
        );
      };
      process.on('SIGTERM', stop);
      process.on('SIGINT', stop);
      // The handlers are in place before the banner tells anyone the gateway is up: a SIGTERM sent as
      // soon as "listening on" is read must drain and exit 0, not kill the process (the default action).
      // One write, so whoever reads the first line gets the whole banner.
      process.stdout.write(lines.join('\n') + '\n');
    });
}
