import type { Key } from '../mux/multiplexer';
import type { BlockingScreen } from './screens';

/** One step of an agent's graceful exit: type a line, or press keys. */
export type ExitStep = { text: string } | { keys: Key[] };

/** A conversation found in an agent's own store. */
export interface StoredConversation {
  id: string;
  /** The directory the conversation ran in, as the agent recorded it (physical path). */
  cwd: string | null;
  createdAt: Date;
}

export interface StoreContext {
  /** The HOME the agent runs with (its store lives under it). */
  home: string;
  /** The environment the agent runs with (XDG_DATA_HOME, CODEX_HOME, …). */
  env: Readonly<Record<string, string | undefined>>;
  /** The agent's program words (default or override), for adapters that ask the CLI itself. */
  program: readonly string[];
}

/** How to delete a stored conversation: a command of the agent's own CLI, or files to remove. */
export type PurgePlan = { argv: string[]; cwd: string } | { files: string[] } | { unsupported: string };

/**
 * What MAM knows about one agent CLI (SPEC §4): how to start and resume it, how it shows it is
 * ready, how to ask it to exit, and where it keeps conversations. docs/agent-clis.md records where
 * each fact comes from (help text, source, or a run).
 */
export interface AgentAdapter {
  readonly name: string;
  /** The program to run (overridable per agent: MAM_AGENT_COMMAND_<NAME>). */
  readonly program: readonly string[];
  /** Flags every spawn and resume gets (overridable: MAM_AGENT_ARGS_<NAME>); they let it work unattended. */
  readonly defaultArgs: readonly string[];
  /** Extra environment the agent needs to run unattended in a pane, given the environment MAM runs with. */
  environment(env: NodeJS.ProcessEnv): Record<string, string>;
  /**
   * A sign on screen that the agent takes input. With one, MAM types only once it shows; without
   * one (`shell`), readiness is judged by quiet output.
   */
  readonly readySign?: RegExp;
  /** Screens that block the agent until a person answers them; MAM names them, never types into them. */
  readonly blockingScreens?: readonly BlockingScreen[];
  readonly exitSteps: readonly ExitStep[];
  /** The conversation ID to pass at spawn, when the CLI lets the caller choose it. */
  preassignId?(): string;
  spawnArgv(program: readonly string[], args: readonly string[], conversationId: string | null): string[];
  /** How to continue a conversation; null when the agent cannot resume one. */
  resumeArgv(program: readonly string[], args: readonly string[], conversationId: string): string[] | null;
  /** Conversations in the agent's store that ran in `cwd` (physical path), newest first. */
  listConversations?(ctx: StoreContext, cwd: string): Promise<StoredConversation[]>;
  /**
   * The conversation a file of the agent's store belongs to, when the agent keeps that file open
   * while it runs (codex keeps its rollout open): the exact way to learn a running agent's ID.
   */
  conversationOfFile?(ctx: StoreContext, file: string): string | undefined;
  purgePlan(ctx: StoreContext, conversationId: string, cwd: string): Promise<PurgePlan>;
}

/** The agent names MAM knows, in the order help and quick picks show them. */
export const AGENT_NAMES = ['claude', 'codex', 'gemini', 'opencode', 'copilot', 'qwen', 'hermes', 'grok', 'agy', 'shell'] as const;
export type AgentName = (typeof AGENT_NAMES)[number];
