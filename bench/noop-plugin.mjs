// A plugin written on the public SDK that does nothing in every request hook it can have: what the
// SDK's hosting (isolation, hook timing) costs a request, measured by `npm run bench:plugins`.
import { definePlugin } from 'tollgate/plugin';

export default definePlugin({
  name: 'bench-noop',
  description: 'Does nothing, in onRequest, onResponseStart and onResponseEnd.',
  configSchema: { type: 'object' },
  create: () => ({
    onRequest() {},
    onResponseStart() {},
    onResponseEnd() {},
  }),
});
