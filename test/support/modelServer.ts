/**
 * The project's model server (test/fixtures/model-server.js) as tests drive it: start it with a
 * script for the agent it plays, read what it was asked and what it answered, and add up the usage
 * it returned for a job the way MAM counts usage (docs/usage.md).
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { readJsonLines, REPO_ROOT, stopChild, tempDir } from './helpers';

export const MODEL_SERVER = path.join(REPO_ROOT, 'test/fixtures/model-server.js');

/** The CLIs the model server tells apart (each protocol module names the one that asked). */
export type ServedAgent = 'codex' | 'claude' | 'gemini' | 'opencode' | 'copilot' | 'qwen';

/** One step of the scripted agent; see the top of test/fixtures/model-server.js. */
export interface ModelStep {
  /** Shell commands run in order through the CLI's shell tool. Placeholders: {job} {report} {round} {step} {role}. */
  run?: string[];
  /** A reviewer passes when the output of every `run` command contains this. */
  passWhen?: string;
  /** The verdict, whatever the checks say. */
  verdict?: 'PASS' | 'NOT PASS';
  /** The report's text (reviewers default to their check output). */
  report?: string;
  /** The one-line `--detail` of `completed`. */
  detail?: string;
  /** Report this with the brief's `error` command instead of completing. */
  error?: string;
  /** Acknowledge nothing and run nothing (the job never starts). */
  silent?: boolean;
  /** The text that ends the turn. */
  final?: string;
  /** The "orchestrate" step: the text that picks the command line out of the skill (default " job submit "). */
  find?: string;
}

export interface ModelServerConfig {
  /** By "<step>:<role>", "<step>", "<role>" or "default"; step is the loop hint's, else "job" ("orchestrate" for a typed delegation). */
  steps?: Record<string, ModelStep>;
  /** Overrides for one CLI. */
  agents?: Partial<Record<ServedAgent, { steps: Record<string, ModelStep> }>>;
  /** Wait before every answer (ms). */
  delayMs?: number;
}

/** The wire protocols the server speaks (one module each in test/fixtures/model-server/). */
export type ModelApi = 'responses' | 'messages' | 'gemini' | 'chat';

/** One line of the server's log: a request, or what it decided to answer. */
export interface ModelLogEntry {
  at: string;
  method?: string;
  path?: string;
  api?: ModelApi;
  agent?: string;
  /** The command it had the CLI run, or the text it ended the turn with. */
  cmd?: string;
  text?: string;
  why?: string;
  job?: string;
  step?: string;
  role?: string;
  verdict?: string;
  report?: string;
  refused?: boolean;
  /** A CONNECT to the server itself (a CLI that ignores NO_PROXY), let through. */
  self?: boolean;
  error?: string;
  [key: string]: unknown;
}

/** One answer's usage, exactly as the server returned it. */
export interface ModelUsageEntry {
  at: string;
  api: ModelApi;
  agent: string;
  model: string | null;
  /** The job whose turn the answer belongs to; null for a side request (a title, a probe). */
  job: string | null;
  /** The request offered the CLI's shell tool (a turn of the conversation, not a side request). */
  tools: boolean;
  usage: Record<string, unknown>;
}

export interface ModelServer {
  port: number;
  /** http://127.0.0.1:PORT (codex gets `${url}/v1`). */
  url: string;
  /** The server's JSON-lines log. */
  log: string;
  /** The log so far. */
  entries(): ModelLogEntry[];
  /** The usage it returned, one entry per answer (MAM_MODEL_USAGE_LOG). */
  usage(): ModelUsageEntry[];
  /** Connections a CLI tried to open beyond this server (HTTPS_PROXY points here): host:port each. */
  outbound(): string[];
  /** The bodies of the requests so far, in order (only with `dumpRequests`). */
  requests(): string[];
  stop(): Promise<void>;
}

/** Starts test/fixtures/model-server.js with `config`; resolves once it listens. */
export async function startModelServer(config: ModelServerConfig = {}, options: { timeoutMs?: number; dumpRequests?: boolean } = {}): Promise<ModelServer> {
  const dir = tempDir('model-server');
  const configFile = path.join(dir, 'config.json');
  const log = path.join(dir, 'requests.jsonl');
  const usageLog = path.join(dir, 'usage.jsonl');
  fs.writeFileSync(configFile, JSON.stringify(config, null, 2));
  const dump = path.join(dir, 'requests');
  if (options.dumpRequests) fs.mkdirSync(dump);
  const child = spawn(process.execPath, [MODEL_SERVER, '--config', configFile, '--log', log, ...(options.dumpRequests ? ['--dump', dump] : [])], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, MAM_MODEL_USAGE_LOG: usageLog } });
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    let err = '';
    const fail = (why: string): void => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(new Error(`model server: ${why}${err ? `: ${err.trim()}` : ''}`));
    };
    const timer = setTimeout(() => fail(`no port within ${options.timeoutMs ?? 10_000} ms`), options.timeoutMs ?? 10_000);
    child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const line = out.split('\n')[0];
      if (!out.includes('\n')) return;
      clearTimeout(timer);
      try {
        resolve((JSON.parse(line) as { port: number }).port);
      } catch {
        fail(`unexpected first line ${JSON.stringify(line)}`);
      }
    });
    child.once('exit', (code, signal) => fail(`exited (${code ?? signal}) before listening`));
  });
  child.removeAllListeners('exit');
  const entries = (): ModelLogEntry[] => readModelLog(log);
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    log,
    entries,
    usage: () => readJsonLines<ModelUsageEntry>(usageLog),
    outbound: () => entries().filter((e) => (e.method === 'CONNECT' && !e.self) || /^https?:\/\//.test(e.path ?? '')).map((e) => e.path ?? ''),
    requests: () => (fs.existsSync(dump) ? fs.readdirSync(dump).sort().map((f) => fs.readFileSync(path.join(dump, f), 'utf8')) : []),
    stop: () => stopChild(child),
  };
}

export function readModelLog(file: string): ModelLogEntry[] {
  return readJsonLines<ModelLogEntry>(file);
}

/** Usage as MAM counts it: input includes cached tokens and cache writes, output includes reasoning. */
export interface ServedUsage {
  input_tokens: number;
  cached_input_tokens: number;
  output_tokens: number;
  requests: number;
}

/** What the model server returned for a job's requests, counted as MAM counts usage (docs/usage.md). */
export function servedUsage(server: Pick<ModelServer, 'usage'>, jobId: string): ServedUsage {
  const sum = { input_tokens: 0, cached_input_tokens: 0, output_tokens: 0, requests: 0 };
  for (const e of server.usage().filter((x) => x.job === jobId)) {
    const c = countsOf(e);
    sum.requests++;
    sum.input_tokens += c.input;
    sum.cached_input_tokens += c.cached;
    sum.output_tokens += c.output;
  }
  return sum;
}

/** One answer's usage in MAM's terms, from each wire format's own fields. */
function countsOf(e: ModelUsageEntry): { input: number; cached: number; output: number } {
  const n = (v: unknown): number => (typeof v === 'number' ? v : 0);
  const u = e.usage;
  switch (e.api) {
    case 'messages': // Anthropic: input_tokens excludes cache reads and writes
      return { input: n(u.input_tokens) + n(u.cache_read_input_tokens) + n(u.cache_creation_input_tokens), cached: n(u.cache_read_input_tokens), output: n(u.output_tokens) };
    case 'responses': // OpenAI Responses: cached inside input_tokens, reasoning inside output_tokens
      return { input: n(u.input_tokens), cached: n((u.input_tokens_details as { cached_tokens?: number } | undefined)?.cached_tokens), output: n(u.output_tokens) };
    case 'chat': // Chat Completions: the same, under other names
      return { input: n(u.prompt_tokens), cached: n((u.prompt_tokens_details as { cached_tokens?: number } | undefined)?.cached_tokens), output: n(u.completion_tokens) };
    case 'gemini': // Gemini API: cached inside promptTokenCount; thoughts apart from candidates
      return { input: n(u.promptTokenCount) + n(u.toolUsePromptTokenCount), cached: n(u.cachedContentTokenCount), output: n(u.candidatesTokenCount) + n(u.thoughtsTokenCount) };
  }
}
