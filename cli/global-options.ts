/**
 * `--data-dir` and `--config` before the subcommand (`tollgate --data-dir /srv/tg users list`) as well
 * as after it. The program parses positional options, so a global given first is the program's and one
 * given after the subcommand is the subcommand's own; before the action runs, a global fills in the
 * subcommand's option of the same name when that one was not given (the subcommand's wins).
 */
import type { Command } from 'commander';

/** Option attribute names that may stand before the subcommand. */
const GLOBAL_OPTIONS = ['dataDir', 'config'] as const;

/** Declares the global options on `program` and hands them down to the command that runs. */
export function addGlobalOptions(program: Command): Command {
  return program
    .enablePositionalOptions()
    .option('--data-dir <dir>', 'data directory, for every command (default: $TOLLGATE_DATA_DIR or ./data)')
    .option('--config <path>', 'manifest, for the commands that read one (default: ./tollgate.json if present, else the built-in default)')
    .hook('preAction', (root, action) => {
      const globals = root.opts();
      for (const name of GLOBAL_OPTIONS) {
        const value = globals[name] as unknown;
        const declared = action.options.some((option) => option.attributeName() === name);
        if (value !== undefined && declared && action.getOptionValue(name) === undefined) action.setOptionValue(name, value);
      }
    });
}
