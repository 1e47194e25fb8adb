/** `tollgate check`: validate a manifest and print every problem with its JSON pointer. */
import { Command } from 'commander';
import { ManifestError, type PluginRegistry } from '../core/manifest.ts';
import { loadManifest } from './manifest-source.ts';
import { addDataDirOption } from './context.ts';

export function checkCommand(registry: PluginRegistry): Command {
  // It reads no data, but takes --data-dir as every command does: a script may pass it to all of them.
  return addDataDirOption(new Command('check'))
    .description('validate a manifest (every error at once, with JSON pointers)')
    .option('--config <path>', 'manifest (default: ./tollgate.json if present, else the built-in default)')
    .option('--json', 'print the effective manifest, defaults filled in')
    .action(async (options: { config?: string; json?: boolean }) => {
      try {
        const { manifest, source } = await loadManifest(options.config, registry);
        if (options.json) process.stdout.write(JSON.stringify(manifest, null, 2) + '\n');
        else process.stdout.write(`${source}: OK (plugins: ${manifest.plugins.map((p) => p.name).join(' → ')})\n`);
      } catch (err) {
        if (!(err instanceof ManifestError)) throw err;
        process.stderr.write(err.message + '\n');
        process.exitCode = 1;
      }
    });
}
