/**
 * The scripted coding agent the LLM simulators play when started with `agent` (for driving a real
 * agent CLI such as Claude Code, Codex, Gemini CLI or opencode): offered a tool named `Write` (else `Bash`, else
 * Codex's `exec_command`, else its older `shell`, else Gemini CLI's `write_file`, else opencode's `write`), the model first
 * calls it to create `agent.file` with `agent.content` in the client's working directory, and once
 * the last user turn carries the tool's result it answers `agent.answer`. Requests without those tools
 * (an agent's side requests: titles, quota checks) get the simulator's ordinary reply.
 *
 * The working directory is read from the request ("Primary working directory: /tmp/x", which Claude
 * Code writes in a system reminder of the first user turn; `<cwd>/tmp/x</cwd>`, in Codex's
 * `<environment_context>`; "**Workspace Directories:**\n  - /tmp/x", in Gemini CLI's
 * `<session_context>`); without one the path stays relative.
 */
export interface SimAgent {
  /** File name, relative to the client's working directory. */
  file: string;
  content: string;
  /** The final text, after the tool's result. */
  answer: string;
}

export interface AgentToolCall {
  name: 'Write' | 'Bash' | 'exec_command' | 'shell' | 'write_file' | 'write';
  input: Record<string, unknown>;
}

/** The first absolute working directory named in any string of `body` (system prompt, turns), if any. */
export function workingDirectory(body: unknown): string | null {
  if (typeof body === 'string') return /working directory:\s*(\/\S*)|<cwd>(\/[^<]*)<\/cwd>|workspace directories:\**\s*- (\/\S*)/i.exec(body)?.slice(1).find(Boolean) ?? null;
  if (!body || typeof body !== 'object') return null;
  for (const value of Object.values(body)) {
    const found = workingDirectory(value);
    if (found) return found;
  }
  return null;
}

const shellQuote = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;

/**
 * The tool call that creates the file, or null when none of the tools is offered. `body` holds the
 * conversation: `system` and `messages` (chat, Anthropic), `instructions` and `input` (Responses), or
 * `contents` (Gemini).
 */
export function agentToolCall(agent: SimAgent, toolNames: string[], body: Record<string, unknown>): AgentToolCall | null {
  const dir = workingDirectory({ system: body.system, messages: body.messages, instructions: body.instructions, input: body.input, contents: body.contents });
  const path = dir ? `${dir.replace(/\/$/, '')}/${agent.file}` : agent.file;
  const command = `printf '%s' ${shellQuote(agent.content)} > ${shellQuote(path)}`;
  if (toolNames.includes('Write')) return { name: 'Write', input: { file_path: path, content: agent.content } };
  if (toolNames.includes('Bash')) return { name: 'Bash', input: { command, description: `Write ${agent.file}` } };
  // Codex: unified exec takes a shell command line; the older `shell` tool an argv.
  if (toolNames.includes('exec_command')) return { name: 'exec_command', input: { cmd: command } };
  if (toolNames.includes('shell')) return { name: 'shell', input: { command: ['bash', '-lc', command] } };
  if (toolNames.includes('write_file')) return { name: 'write_file', input: { file_path: path, content: agent.content } };
  // opencode's file tool takes `filePath` (camelCase), an absolute path.
  if (toolNames.includes('write')) return { name: 'write', input: { filePath: path, content: agent.content } };
  return null;
}

/**
 * The agent's answer to a request for JSON output (an agent's side request, such as Gemini CLI's model
 * router asking for a `complexity_score`): the schema's required properties, filled in by type
 * (strings "simulated", numbers 1, booleans false, arrays empty); Gemini's upper-case type names too.
 */
export function agentJson(schema: Record<string, unknown>): unknown {
  switch (String(schema.type).toLowerCase()) {
    case 'object': {
      const properties = (schema.properties ?? {}) as Record<string, Record<string, unknown>>;
      return Object.fromEntries(((schema.required ?? []) as string[]).map((name) => [name, agentJson(properties[name] ?? {})]));
    }
    case 'array': return [];
    case 'integer': case 'number': return 1;
    case 'boolean': return false;
    default: return 'simulated';
  }
}
