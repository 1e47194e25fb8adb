// A Tollgate plugin to start from (docs/plugins.md, "Writing your own plugin"). It tags every answer
// with a header, `x-request-tag: <tag>` (the caller's own `x-request-tag` request header when it sent
// one that the config allows, else the configured default), and writes the tag to the request's log
// row (`plugin_fields`, as `request-tag.tag`), so an operator can filter spend by it.
//
// Load it by naming this package (or this file) in the manifest, before provider-router:
//   { "module": "tollgate-plugin-request-tag", "config": { "defaultTag": "untagged", "allowedTags": ["search", "chat"] } }

/** @import { Exchange, Plugin } from 'tollgate/plugin' */
import { definePlugin, gatewayError, logField } from 'tollgate/plugin';

/** The request header a caller sets to tag its request. */
const TAG_HEADER = 'x-request-tag';

export default definePlugin({
  name: 'request-tag',
  version: '1.0.0',
  description: 'Tags every answer with x-request-tag and every log row with request-tag.tag.',
  configSchema: {
    type: 'object',
    additionalProperties: false,
    properties: {
      defaultTag: { type: 'string', minLength: 1, maxLength: 64, default: 'untagged', description: 'The tag of a request that names none.' },
      allowedTags: {
        type: 'array', items: { type: 'string', minLength: 1, maxLength: 64 }, uniqueItems: true,
        description: 'Tags a caller may name in x-request-tag; a request naming another is refused (400 unknown_request_tag). Absent: any tag.',
      },
    },
  },

  /**
   * @param {{ defaultTag: string, allowedTags?: string[] }} config
   * @returns {Plugin<{ tag: string }>}
   */
  create(config, ctx) {
    const allowed = config.allowedTags ? new Set(config.allowedTags) : null;
    const tagged = ctx.metrics.counter({ name: 'requests_total', help: 'Requests by tag.', labelNames: ['tag'] });
    return {
      createState: () => ({ tag: config.defaultTag }),

      /** Reads and checks the caller's tag; a tag the config does not allow is the caller's mistake (400). */
      onRequest(ex, state) {
        const asked = headerValue(ex, TAG_HEADER);
        if (asked === undefined) return;
        if (asked.length > 64) throw gatewayError(400, 'unknown_request_tag', 'x-request-tag is longer than 64 characters.', { param: TAG_HEADER });
        if (allowed && !allowed.has(asked)) {
          throw gatewayError(400, 'unknown_request_tag', `x-request-tag must be one of: ${[...allowed].join(', ')}.`, { param: TAG_HEADER });
        }
        state.tag = asked;
      },

      onResponseStart(ex, state) {
        ex.responseHeaders[TAG_HEADER] = state.tag;
        logField(ex, 'request-tag.tag', state.tag);
      },

      onResponseEnd(ex, state) {
        // A metric label per value a caller may invent would grow without bound: without an allow-list,
        // callers' own tags count as "other".
        tagged.inc({ tag: allowed || state.tag === config.defaultTag ? state.tag : 'other' });
      },
    };
  },
});

/**
 * A request header's value (the first, when repeated), or undefined.
 * @param {Exchange} ex
 * @param {string} name lowercase
 */
function headerValue(ex, name) {
  const value = ex.headers[name];
  return Array.isArray(value) ? value[0] : value;
}
