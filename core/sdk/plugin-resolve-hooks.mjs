// Module resolution hooks (node:module `register`), registered by core/sdk/load-modules.ts when the
// manifest names a plugin module: `import ... from 'tollgate/plugin'` in an operator's plugin resolves
// to the running gateway's own SDK, wherever the plugin's folder is and whether or not it installed
// Tollgate itself. So a plugin file in any folder works, and always with the SDK of the gateway that
// runs it. Plain JavaScript: it runs on Node's module-loader thread, before any TypeScript loader.
let sdkUrl = null;

export function initialize(data) {
  sdkUrl = data.sdkUrl;
}

export async function resolve(specifier, context, next) {
  if (specifier === 'tollgate/plugin' && sdkUrl) return { url: sdkUrl, shortCircuit: true };
  return next(specifier, context);
}
