import type { Core } from '../core/core';
import type { ToolInput } from './toolInput';

/** What a tool's run gets: the workspace's core, and the call's own signal and progress. */
export interface ToolCall {
  core: Core;
  /** Aborted when the client cancels the call (a wait stops; what it waits for goes on). */
  signal: AbortSignal;
  /** A progress notification, when the client asked for them (its progressToken); else nothing. */
  progress(message: string): void;
}

/** A tool's answer: the record asked about (structuredContent) and one short line for people (text). */
export interface ToolAnswer {
  data: Record<string, unknown>;
  text: string;
  /** The tool did its work but what was asked did not happen (a job not delivered): `data.error` says why. */
  isError?: boolean;
}

/** Hints for a client deciding whether to ask the user first (MCP's ToolAnnotations). */
export interface ToolHints {
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
}

export interface Tool<T = unknown> {
  name: string;
  title: string;
  description: string;
  input: ToolInput<T>;
  /**
   * It starts, types into, changes or runs something (an agent, git, the broker): refused in an
   * untrusted workspace. Reading `.mam/` is not acting.
   */
  acts: boolean;
  hints: ToolHints;
  /** The CLI line it does the work of, for docs/mcp.md. */
  cli: string;
  run(args: T, call: ToolCall): Promise<ToolAnswer>;
}

/** A tool whose run sees its inputs typed from its declaration. */
export function defineTool<T>(tool: Tool<T>): Tool {
  // Each tool reads its own arguments with its own schema before `run` sees them (server.ts).
  return { ...tool, run: (args, call) => tool.run(tool.input.schema.read(args, ''), call) };
}
