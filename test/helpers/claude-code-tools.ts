/**
 * Twelve tool definitions shaped like the ones Claude Code sends on every request (names, parameter
 * structure and typical description lengths of Bash, Read, Edit, Write, Glob, Grep, TodoWrite,
 * WebFetch, WebSearch, Task, NotebookEdit, ExitPlanMode), in Anthropic's `tools` format with JSON
 * Schema `input_schema`s. The descriptions are written for these tests, of the same size and kind
 * (usage notes, constraints, examples), not copied from Claude Code.
 */

const SCHEMA = 'http://json-schema.org/draft-07/schema#';

/** A paragraph of usage notes of roughly `sentences` sentences about `topic`. */
function notes(topic: string, sentences: string[]): string {
  return `${topic}\n\nUsage notes:\n${sentences.map((s) => `- ${s}`).join('\n')}`;
}

function object(properties: Record<string, unknown>, required: string[]): Record<string, unknown> {
  return { type: 'object', properties, required, additionalProperties: false, $schema: SCHEMA };
}

export const CLAUDE_CODE_TOOLS = [
  {
    name: 'Bash',
    description: notes('Runs a shell command in a persistent session with an optional timeout, with the working directory kept between calls.', [
      'Before creating directories or files, check with a listing that the parent directory exists and is the intended location.',
      'Quote paths that contain spaces with double quotes, for example cd "/Users/name/My Documents".',
      'The command argument is required. The timeout is in milliseconds, up to 600000 (10 minutes); the default is 120000.',
      'Write a clear description of what the command does in five to ten words, so the user can follow along.',
      'Output longer than 30000 characters is truncated before it is returned to you.',
      'Do not use find, grep, cat, head, tail or ls to read or search files: use the Glob, Grep and Read tools, which are faster and give better results.',
      'When several commands are needed, join them with ; or && instead of newlines; newlines are allowed inside quoted strings.',
      'Keep the current directory stable by using absolute paths rather than cd, unless the user asks for it.',
      'To commit changes with git, first run git status, git diff and git log in parallel to understand the change and the repository\'s message style; never update the git config, never push unless asked, and never use interactive flags such as -i.',
      'To open a pull request, use the gh command for every GitHub task; summarise all commits of the branch, not only the latest one, and return the pull request URL when done.',
      'Long-running commands can run in the background with run_in_background; their output can be read later with the BashOutput tool.',
    ]),
    input_schema: object({
      command: { type: 'string', description: 'The command to execute' },
      timeout: { type: 'number', description: 'Optional timeout in milliseconds (max 600000)' },
      description: { type: 'string', description: 'Clear, concise description of what this command does in 5-10 words, in active voice. Examples: "List files in current directory", "Install package dependencies", "Show working tree status"' },
      run_in_background: { type: 'boolean', description: 'Set to true to run this command in the background. Use BashOutput to read the output later.' },
    }, ['command']),
  },
  {
    name: 'Read',
    description: notes('Reads a file from the local filesystem. Any file the user names can be read directly; assume a path given by the user is valid.', [
      'The file_path parameter must be an absolute path, not a relative one.',
      'By default up to 2000 lines are read from the start of the file; give offset and limit for long files, though reading the whole file is usually best.',
      'Lines longer than 2000 characters are truncated. Results are returned in cat -n format, with line numbers starting at 1.',
      'Images (PNG, JPG and others) are shown to you visually, PDF files page by page with their text and images, and Jupyter notebooks with all cells and outputs.',
      'Only files can be read, not directories: list a directory with ls through the Bash tool.',
      'Several files that may be useful can be read in parallel in one response.',
      'An empty file that exists produces a reminder in place of its contents.',
    ]),
    input_schema: object({
      file_path: { type: 'string', description: 'The absolute path to the file to read' },
      offset: { type: 'number', description: 'The line number to start reading from. Only provide if the file is too large to read at once' },
      limit: { type: 'number', description: 'The number of lines to read. Only provide if the file is too large to read at once.' },
    }, ['file_path']),
  },
  {
    name: 'Edit',
    description: notes('Performs exact string replacements in files.', [
      'The file must have been read with the Read tool at least once in the conversation before it is edited; editing an unread file is an error.',
      'Keep the exact indentation (tabs or spaces) as it appears after the line-number prefix of the Read output, and never include the prefix in old_string or new_string.',
      'Prefer editing existing files; never write new files unless the task requires it.',
      'The edit fails when old_string is not unique in the file: give a larger string with more surrounding context, or set replace_all to change every instance.',
      'Use replace_all to rename a variable or other identifier across the file.',
    ]),
    input_schema: object({
      file_path: { type: 'string', description: 'The absolute path to the file to modify' },
      old_string: { type: 'string', description: 'The text to replace' },
      new_string: { type: 'string', description: 'The text to replace it with (must be different from old_string)' },
      replace_all: { type: 'boolean', default: false, description: 'Replace all occurrences of old_string (default false)' },
    }, ['file_path', 'old_string', 'new_string']),
  },
  {
    name: 'Write',
    description: notes('Writes a file to the local filesystem, overwriting the file that is there.', [
      'An existing file must be read with the Read tool first, or the write fails.',
      'Prefer editing existing files; never create documentation files (*.md) or READMEs unless the user asks for them.',
      'Do not add emojis to files unless asked.',
    ]),
    input_schema: object({
      file_path: { type: 'string', description: 'The absolute path to the file to write (must be absolute, not relative)' },
      content: { type: 'string', description: 'The content to write to the file' },
    }, ['file_path', 'content']),
  },
  {
    name: 'Glob',
    description: notes('Fast file pattern matching that works with any codebase size.', [
      'Supports glob patterns like "**/*.js" or "src/**/*.ts" and returns matching paths sorted by modification time.',
      'Use it to find files by name; for open-ended searches that may take several rounds, use the Task tool instead.',
      'Several searches that may be useful can run in parallel in one response.',
    ]),
    input_schema: object({
      pattern: { type: 'string', description: 'The glob pattern to match files against' },
      path: { type: 'string', description: 'The directory to search in. If not specified, the current working directory will be used. Omit this field to use the default directory; do not enter "undefined" or "null".' },
    }, ['pattern']),
  },
  {
    name: 'Grep',
    description: notes('A powerful search tool built on ripgrep.', [
      'Always use Grep for search tasks; never run grep or rg through the Bash tool, whose permissions and output are tuned for this tool.',
      'Supports full regular expression syntax, for example "log.*Error" or "function\\s+\\w+".',
      'Filter files with the glob parameter (for example "*.js") or the type parameter (for example "js", "py", "rust").',
      'Output modes: "content" shows matching lines, "files_with_matches" shows only file paths (the default), "count" shows match counts.',
      'Patterns use ripgrep syntax, not grep: literal braces need escaping, so interface\\{\\} finds interface{} in Go code.',
      'Matches stay within single lines by default; set multiline to true for patterns that span lines.',
    ]),
    input_schema: object({
      pattern: { type: 'string', description: 'The regular expression pattern to search for in file contents' },
      path: { type: 'string', description: 'File or directory to search in (rg PATH). Defaults to current working directory.' },
      glob: { type: 'string', description: 'Glob pattern to filter files (e.g. "*.js", "*.{ts,tsx}") - maps to rg --glob' },
      output_mode: { type: 'string', enum: ['content', 'files_with_matches', 'count'], description: 'Output mode: "content" shows matching lines, "files_with_matches" shows file paths, "count" shows match counts. Defaults to "files_with_matches".' },
      '-B': { type: 'number', description: 'Number of lines to show before each match (rg -B). Requires output_mode: "content", ignored otherwise.' },
      '-A': { type: 'number', description: 'Number of lines to show after each match (rg -A). Requires output_mode: "content", ignored otherwise.' },
      '-C': { type: 'number', description: 'Number of lines to show before and after each match (rg -C). Requires output_mode: "content", ignored otherwise.' },
      '-n': { type: 'boolean', description: 'Show line numbers in output (rg -n). Requires output_mode: "content", ignored otherwise.' },
      '-i': { type: 'boolean', description: 'Case insensitive search (rg -i)' },
      type: { type: 'string', description: 'File type to search (rg --type). Common types: js, py, rust, go, java, etc. More efficient than include for standard file types.' },
      head_limit: { type: 'number', description: 'Limit output to first N lines/entries, equivalent to "| head -N". Works across all output modes.' },
      multiline: { type: 'boolean', description: 'Enable multiline mode where . matches newlines and patterns can span lines (rg -U --multiline-dotall). Default: false.' },
    }, ['pattern']),
  },
  {
    name: 'TodoWrite',
    description: notes('Creates and manages a structured task list for the current coding session, to track progress and show the user how the work is going.', [
      'Use it for complex tasks of three or more distinct steps, when the user gives several tasks at once, or asks for a todo list.',
      'Do not use it for a single straightforward task, or for tasks that are purely conversational or informational.',
      'Task states: pending (not started), in_progress (being worked on; exactly one at a time), completed (finished).',
      'Mark tasks completed as soon as they are done, without batching; only mark a task completed when it is fully accomplished, with tests passing and nothing left unresolved.',
      'Each task has two forms: content, the imperative ("Run tests"), and activeForm, the present continuous shown while it runs ("Running tests").',
      'Break complex work into specific, actionable items, and add new tasks as they are discovered during implementation.',
    ]),
    input_schema: object({
      todos: {
        type: 'array',
        description: 'The updated todo list',
        items: {
          type: 'object',
          properties: {
            content: { type: 'string', minLength: 1 },
            status: { type: 'string', enum: ['pending', 'in_progress', 'completed'] },
            activeForm: { type: 'string', minLength: 1 },
          },
          required: ['content', 'status', 'activeForm'],
          additionalProperties: false,
        },
      },
    }, ['todos']),
  },
  {
    name: 'WebFetch',
    description: notes('Fetches content from a URL and processes it with an AI model.', [
      'Takes a URL and a prompt; fetches the page, converts HTML to markdown, and answers the prompt about it with a small, fast model.',
      'If an MCP-provided web fetch tool is available, prefer it, as it may have fewer restrictions.',
      'The URL must be fully formed and valid; HTTP URLs are upgraded to HTTPS. This tool is read-only and does not modify files.',
      'Results may be summarised when the content is very large. A 15-minute cache makes repeated fetches of one URL faster.',
      'When a URL redirects to a different host, the tool says so and gives the redirect URL: make a new request with it.',
    ]),
    input_schema: object({
      url: { type: 'string', format: 'uri', description: 'The URL to fetch content from' },
      prompt: { type: 'string', description: 'The prompt to run on the fetched content' },
    }, ['url', 'prompt']),
  },
  {
    name: 'WebSearch',
    description: notes('Searches the web and uses the results to inform responses, giving up-to-date information beyond the model\'s knowledge cutoff.', [
      'Returns search result blocks with titles and URLs formatted as markdown hyperlinks.',
      'Domain filtering is supported to include or block specific websites.',
      'Web search is only available in the US. Account for the current date when writing search queries.',
    ]),
    input_schema: object({
      query: { type: 'string', minLength: 2, description: 'The search query to use' },
      allowed_domains: { type: 'array', items: { type: 'string' }, description: 'Only include search results from these domains' },
      blocked_domains: { type: 'array', items: { type: 'string' }, description: 'Never include search results from these domains' },
    }, ['query']),
  },
  {
    name: 'Task',
    description: notes('Launches a new agent to handle complex, multi-step tasks autonomously. Available agent types: general-purpose (researching complex questions, searching for code, executing multi-step tasks; all tools), statusline-setup (configures the status line setting; Read and Edit), output-style-setup (creates an output style; Read, Write, Edit, Glob, Grep).', [
      'Give a short (3-5 word) description of the task and a detailed prompt, including exactly what information the agent should return in its final message.',
      'Launch several agents concurrently when possible, by sending one message with several tool uses.',
      'The agent\'s result is not visible to the user: send the user a short summary of it.',
      'Each invocation is stateless: the agent cannot be sent further messages, so the prompt must be self-contained.',
      'Say clearly whether the agent should write code or only research (search, read files, fetch pages), since it does not know the user\'s intent.',
      'Do not use it to read a specific file path (use Read or Glob) or to search for a class definition (use Glob).',
    ]),
    input_schema: object({
      description: { type: 'string', description: 'A short (3-5 word) description of the task' },
      prompt: { type: 'string', description: 'The task for the agent to perform' },
      subagent_type: { type: 'string', description: 'The type of specialized agent to use for this task' },
    }, ['description', 'prompt', 'subagent_type']),
  },
  {
    name: 'NotebookEdit',
    description: notes('Replaces the contents of a specific cell in a Jupyter notebook (.ipynb file) with new source.', [
      'Jupyter notebooks are interactive documents that combine code, text and visualisations, commonly used for data analysis and scientific computing.',
      'The notebook_path parameter must be an absolute path. cell_id selects the cell; cell numbering is 0-indexed.',
      'Use edit_mode "insert" to add a new cell after the given cell, or "delete" to remove it.',
    ]),
    input_schema: object({
      notebook_path: { type: 'string', description: 'The absolute path to the Jupyter notebook file to edit (must be absolute, not relative)' },
      cell_id: { type: 'string', description: 'The ID of the cell to edit. When inserting a new cell, the new cell will be inserted after the cell with this ID, or at the beginning if not specified.' },
      new_source: { type: 'string', description: 'The new source for the cell' },
      cell_type: { type: 'string', enum: ['code', 'markdown'], description: 'The type of the cell (code or markdown). If not specified, it defaults to the current cell type. If using edit_mode=insert, this is required.' },
      edit_mode: { type: 'string', enum: ['replace', 'insert', 'delete'], description: 'The type of edit to make (replace, insert, delete). Defaults to replace.' },
    }, ['notebook_path', 'new_source']),
  },
  {
    name: 'ExitPlanMode',
    description: notes('Use this tool in plan mode, once the plan is written and ready for the user\'s approval.', [
      'Only use it when the task requires planning the implementation steps of a task that writes code.',
      'For research tasks (searching files, reading files, understanding the codebase) do not use it.',
      'Present the plan in markdown, concise and complete, before asking the user to approve it.',
    ]),
    input_schema: object({
      plan: { type: 'string', description: 'The plan you came up with, that you want to run by the user for approval. Supports markdown. The plan should be pretty concise.' },
    }, ['plan']),
  },
];
