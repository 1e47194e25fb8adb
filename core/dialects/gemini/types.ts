/**
 * The Gemini API's request and answer shapes as the `gemini` dialect reads and writes them: what
 * `generateContent`, `streamGenerateContent` and `countTokens` take and give, after
 * https://ai.google.dev/api/generate-content , https://ai.google.dev/api/caching#Content and
 * `@google/genai` (`GenerateContentParameters`, `GenerateContentResponse`). Fields the gateway does
 * not read stay open (`[field: string]: unknown`): on a native pass-through they reach Gemini as sent.
 */

/** One part of a `Content`: exactly one data field (`text`, `inlineData`, `functionCall`, ...). */
export interface GeminiPart {
  text?: string;
  /** True on a part that holds the model's thinking. */
  thought?: boolean;
  /** Opaque signature Gemini 3 wants replayed on the part it came with. */
  thoughtSignature?: string;
  inlineData?: { mimeType: string; data: string };
  fileData?: { mimeType?: string; fileUri: string };
  functionCall?: { id?: string; name: string; args?: Record<string, unknown> };
  functionResponse?: { id?: string; name: string; response?: Record<string, unknown> };
  [field: string]: unknown;
}

/** A turn: `role` `user` or `model` (absent = `user`). */
export interface GeminiContent {
  role?: string;
  parts: GeminiPart[];
}

export interface GeminiFunctionDeclaration {
  name: string;
  description?: string;
  /** Gemini's OpenAPI-subset schema (`type` in capitals: `OBJECT`, `STRING`). */
  parameters?: Record<string, unknown>;
  /** A JSON Schema, the form Gemini CLI sends. */
  parametersJsonSchema?: Record<string, unknown>;
}

/** One entry of `tools`: function declarations, or one of Gemini's own tools (`googleSearch`, `codeExecution`, ...). */
export interface GeminiTool {
  functionDeclarations?: GeminiFunctionDeclaration[];
  [field: string]: unknown;
}

export interface GeminiGenerationConfig {
  temperature?: number;
  topP?: number;
  topK?: number;
  maxOutputTokens?: number;
  stopSequences?: string[];
  candidateCount?: number;
  seed?: number;
  presencePenalty?: number;
  frequencyPenalty?: number;
  responseMimeType?: string;
  responseSchema?: Record<string, unknown>;
  responseJsonSchema?: Record<string, unknown>;
  thinkingConfig?: { thinkingBudget?: number; thinkingLevel?: string; includeThoughts?: boolean };
  [field: string]: unknown;
}

/** The body of `generateContent` / `streamGenerateContent` (the model is in the path). */
export interface GenerateContentRequest {
  contents: GeminiContent[];
  systemInstruction?: GeminiContent | string;
  tools?: GeminiTool[];
  toolConfig?: { functionCallingConfig?: { mode?: string; allowedFunctionNames?: string[] } };
  generationConfig?: GeminiGenerationConfig;
  [field: string]: unknown;
}

/** `usageMetadata`: `candidatesTokenCount` excludes `thoughtsTokenCount`; cached tokens are part of the prompt's. */
export interface UsageMetadata {
  promptTokenCount: number;
  candidatesTokenCount: number;
  totalTokenCount: number;
  cachedContentTokenCount?: number;
  thoughtsTokenCount?: number;
}

export interface GeminiCandidate {
  content: { role: 'model'; parts: GeminiPart[] };
  finishReason?: string;
  index: number;
}

/** One answer, or one event of a stream. */
export interface GenerateContentResponse {
  candidates: GeminiCandidate[];
  usageMetadata?: UsageMetadata;
  modelVersion: string;
  responseId: string;
}

/** Google's error body (`google.rpc.Status` as JSON). */
export interface GeminiErrorResponse {
  error: { code: number; message: string; status: string };
}
