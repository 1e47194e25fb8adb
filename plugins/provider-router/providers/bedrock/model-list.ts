/**
 * Bedrock's model list, read from the control plane: `ListFoundationModels` (the models with text
 * output, i.e. the chat models) and `ListInferenceProfiles` (the system-defined cross-region profiles
 * such as `us.anthropic.claude-sonnet-4-6-v1:0` and the account's application profiles), one list.
 * Claude's newer models are served only through an inference profile, so without the profiles a
 * client could not find the id that works.
 *
 * A profile is listed when it is `ACTIVE` and one of the models it routes to is a text model of the
 * first list (an embedding or image model's profile is no chat model); its `owned_by` is that model's
 * provider. Profiles come in pages joined by `nextToken`. A principal that may list foundation models
 * but not profiles (`bedrock:ListInferenceProfiles` is its own IAM action) still gets the models:
 * only a 403 of the profile list is passed over.
 *
 * Sources: https://docs.aws.amazon.com/bedrock/latest/APIReference/API_ListFoundationModels.html ;
 * https://docs.aws.amazon.com/bedrock/latest/APIReference/API_ListInferenceProfiles.html (the
 * `inferenceProfileSummaries` shape, `nextToken`, `maxResults` up to 1000).
 */
import { GatewayError } from '../../../../core/errors.ts';
import { malformedResponse } from '../canonical.ts';
import type { CatalogEntry } from '../base.ts';

/** One signed GET to the control plane, answered with its parsed JSON body. */
export type ControlPlaneGet = (pathAndQuery: string) => Promise<unknown>;

interface FoundationModelList {
  modelSummaries?: Array<{ modelId?: unknown; modelName?: unknown; providerName?: unknown }>;
}

interface InferenceProfileList {
  inferenceProfileSummaries?: Array<{
    inferenceProfileId?: unknown; inferenceProfileName?: unknown; status?: unknown; createdAt?: unknown; models?: Array<{ modelArn?: unknown }>;
  }>;
  nextToken?: unknown;
}

/** Most profile pages read: AWS caps a page at 1000, and no account has 20,000 profiles. */
const MAX_PROFILE_PAGES = 20;

/** The foundation models with text output, then the inference profiles routing to them (module doc). */
export async function listBedrockModels(provider: string, get: ControlPlaneGet): Promise<CatalogEntry[]> {
  const list = (await get('/foundation-models?byOutputModality=TEXT')) as FoundationModelList;
  if (!list || !Array.isArray(list.modelSummaries)) throw malformedResponse(provider, 'a model list without "modelSummaries"');
  const entries: CatalogEntry[] = [];
  const ownerById = new Map<string, string>();
  for (const model of list.modelSummaries) {
    if (typeof model?.modelId !== 'string' || model.modelId === '') continue;
    const owner = typeof model.providerName === 'string' ? model.providerName : 'bedrock';
    const entry: CatalogEntry = { id: model.modelId, created: 0, owned_by: owner };
    if (typeof model.modelName === 'string' && model.modelName !== '') entry.display_name = model.modelName;
    entries.push(entry);
    ownerById.set(model.modelId, owner);
  }
  return entries.concat(await listProfiles(provider, get, ownerById));
}

async function listProfiles(provider: string, get: ControlPlaneGet, ownerById: Map<string, string>): Promise<CatalogEntry[]> {
  const entries: CatalogEntry[] = [];
  let nextToken = '';
  for (let page = 0; page < MAX_PROFILE_PAGES; page++) {
    const query = nextToken ? `?maxResults=1000&nextToken=${encodeURIComponent(nextToken)}` : '?maxResults=1000';
    let list: InferenceProfileList;
    try {
      list = (await get(`/inference-profiles${query}`)) as InferenceProfileList;
    } catch (err) {
      if (err instanceof GatewayError && err.status === 403) return entries;
      throw err;
    }
    if (!list || !Array.isArray(list.inferenceProfileSummaries)) throw malformedResponse(provider, 'an inference profile list without "inferenceProfileSummaries"');
    for (const profile of list.inferenceProfileSummaries) {
      const entry = profileEntry(profile, ownerById);
      if (entry) entries.push(entry);
    }
    if (typeof list.nextToken !== 'string' || list.nextToken === '') break;
    nextToken = list.nextToken;
  }
  return entries;
}

function profileEntry(profile: NonNullable<InferenceProfileList['inferenceProfileSummaries']>[number], ownerById: Map<string, string>): CatalogEntry | null {
  if (typeof profile?.inferenceProfileId !== 'string' || profile.inferenceProfileId === '' || profile.status !== 'ACTIVE') return null;
  // `arn:aws:bedrock:{region}::foundation-model/{modelId}`: the model id is what follows the last `/`.
  const owner = (profile.models ?? [])
    .map((model) => (typeof model?.modelArn === 'string' ? ownerById.get(model.modelArn.slice(model.modelArn.lastIndexOf('/') + 1)) : undefined))
    .find((found) => found !== undefined);
  if (owner === undefined) return null;
  const entry: CatalogEntry = { id: profile.inferenceProfileId, created: createdSec(profile.createdAt), owned_by: owner };
  if (typeof profile.inferenceProfileName === 'string' && profile.inferenceProfileName !== '') entry.display_name = profile.inferenceProfileName;
  return entry;
}

/** AWS's timestamp (ISO 8601 text, or epoch seconds) as Unix seconds; 0 when absent or unreadable. */
function createdSec(value: unknown): number {
  if (typeof value === 'number' && Number.isFinite(value)) return Math.floor(value);
  const ms = typeof value === 'string' ? Date.parse(value) : NaN;
  return Number.isFinite(ms) ? Math.floor(ms / 1000) : 0;
}
