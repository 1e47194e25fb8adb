/**
 * The report APIs Tollgate reads, by kind: the one place a kind names its reader. A provider id of
 * the manifest reconciles through the kind its admin credential was stored with
 * (`usage_report_credentials.kind`). AWS Cost Explorer and Azure Cost Management join here.
 */
import { createAnthropicUsageReport } from './anthropic-usage-report.ts';
import { createOpenAiUsageReport } from './openai-usage-report.ts';
import type { UsageReportSourceFactory } from './usage-report-source.ts';

export const REPORT_SOURCES: ReadonlyMap<string, UsageReportSourceFactory> = new Map<string, UsageReportSourceFactory>([
  ['openai', createOpenAiUsageReport],
  ['anthropic', createAnthropicUsageReport],
]);

/** The kinds a credential may be stored with. */
export const REPORT_KINDS: readonly string[] = [...REPORT_SOURCES.keys()];
