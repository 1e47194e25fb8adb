/**
 * The composition root: the one module that knows both the plugins (`plugins/index.ts`) and the
 * command line (`cli/`), and hands the first to the second. `bin/tollgate.js` runs it, and it is the
 * entry point of the bundle (`bin/build.js`).
 */
import { pluginRegistry } from './plugins/index.ts';
import { runCli } from './cli/main.ts';

await runCli(pluginRegistry);
