import * as fs from 'node:fs';
import * as path from 'node:path';
import { adapterFor } from '../agents';
import { openFilesOf, parentOf } from './openFiles';

/** The agent CLI whose shell tool ran this process, and the conversation it is in. */
export type EnclosingAgent =
  | {
      found: true;
      agent: 'claude' | 'codex';
      pid: number;
      conversationId: string;
      /** How the conversation was learned, for the user. */
      how: string;
      /** The MAM session that agent is (MAM_SESSION in its environment): a sub-agent, not an orchestrator. */
      mamSession: string | null;
    }
  | { found: false; why: string };

interface Proc {
  pid: number;
  /** The program's file name: /proc/<pid>/exe, else argv[0]. */
  exe: string;
  argv: string[];
  env: Record<string, string>;
}

interface KnownAgent {
  agent: 'claude' | 'codex';
  is(proc: Proc): boolean;
  /** The conversation, from the agent's process and the process it started on our way down. */
  conversation(agent: Proc, below: Proc): { id: string; how: string } | undefined;
  /** The variable the agent sets for its shell tool (checked from the environment when /proc is not there). */
  variable: string;
}

/*
 * What the pinned CLIs do, seen from inside their shell tool (test/integration/initAgents.test.ts):
 * claude 2.1.197 holds no conversation file open while it runs, but gives every command it runs
 * CLAUDECODE=1 and CLAUDE_CODE_SESSION_ID=<its session>; codex 0.171.0 holds its rollout
 * (~/.codex/sessions/…/rollout-…-<id>.jsonl) open and gives its commands CODEX_THREAD_ID=<id>.
 */
const KNOWN: readonly KnownAgent[] = [
  {
    agent: 'claude',
    variable: 'CLAUDE_CODE_SESSION_ID',
    // npm's bin/claude.exe; the native installer's versions/<version>, started through a `claude` link; old npm's cli.js.
    is: (p) => ['claude', 'claude.exe'].includes(path.basename(p.exe)) || programName(p) === 'claude' || /claude-code[\\/]cli\.[cm]?js$/.test(p.argv[1] ?? ''),
    conversation: (_agent, below) => {
      const id = below.env.CLAUDE_CODE_SESSION_ID;
      return id ? { id, how: 'CLAUDE_CODE_SESSION_ID, which claude gives the commands it runs' } : undefined;
    },
  },
  {
    agent: 'codex',
    variable: 'CODEX_THREAD_ID',
    // The native binary (npm's node wrapper starts it; we meet the binary first on the way up).
    is: (p) => path.basename(p.exe) === 'codex' || programName(p) === 'codex',
    conversation: (agent, below) => {
      const adapter = adapterFor('codex');
      const ctx = { home: agent.env.HOME ?? '', env: agent.env, program: adapter.program };
      const ids = new Set(openFilesOf(agent.pid).map((f) => adapter.conversationOfFile!(ctx, f)).filter((id): id is string => id !== undefined));
      if (ids.size === 1) return { id: [...ids][0]!, how: 'the conversation file codex holds open' };
      const id = below.env.CODEX_THREAD_ID;
      return id ? { id, how: 'CODEX_THREAD_ID, which codex gives the commands it runs' } : undefined;
    },
  },
];

const MAX_DEPTH = 64;

/**
 * Walks up from `pid` (this process) to the nearest claude or codex process: the agent whose shell
 * tool ran us, if any. Without /proc (not Linux) only the variables the agents set can tell, and
 * only when one agent's are there.
 */
export function findEnclosingAgent(pid = process.pid, env: NodeJS.ProcessEnv = process.env): EnclosingAgent {
  const self = readProc(pid);
  if (!self) return fromEnvironment(env);
  let below = self;
  for (let depth = 0, ppid = parentOf(pid); ppid !== undefined && ppid >= 1 && depth < MAX_DEPTH; depth++, ppid = parentOf(ppid)) {
    const proc = readProc(ppid);
    if (!proc) break;
    const known = KNOWN.find((k) => k.is(proc));
    if (known) {
      const conversation = known.conversation(proc, below);
      if (!conversation) return { found: false, why: `${known.agent} (pid ${proc.pid}) runs this, but its conversation could not be found` };
      return { found: true, agent: known.agent, pid: proc.pid, conversationId: conversation.id, how: conversation.how, mamSession: proc.env.MAM_SESSION ?? below.env.MAM_SESSION ?? null };
    }
    below = proc;
  }
  return { found: false, why: 'not run by a claude or codex agent' };
}

function fromEnvironment(env: NodeJS.ProcessEnv): EnclosingAgent {
  const set = KNOWN.filter((k) => env[k.variable] && (k.agent !== 'claude' || env.CLAUDECODE === '1'));
  if (set.length !== 1) {
    return { found: false, why: set.length === 0 ? 'not run by a claude or codex agent' : `both ${set.map((k) => k.variable).join(' and ')} are set; cannot tell which agent runs this` };
  }
  const k = set[0]!;
  return { found: true, agent: k.agent, pid: 0, conversationId: env[k.variable]!, how: `${k.variable} in the environment`, mamSession: env.MAM_SESSION ?? null };
}

/** The name the process was started by (argv[0]), without its folder. */
function programName(p: Proc): string {
  return path.basename(p.argv[0] ?? '');
}

/** A process as /proc shows it; undefined when it is gone, not ours to read, or there is no /proc. */
function readProc(pid: number): Proc | undefined {
  try {
    const argv = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
    let exe = argv[0] ?? '';
    try {
      exe = fs.readlinkSync(`/proc/${pid}/exe`);
    } catch {
      // another user's process: its argv[0] has to do
    }
    const env: Record<string, string> = {};
    try {
      for (const entry of fs.readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0')) {
        const eq = entry.indexOf('=');
        if (eq > 0) env[entry.slice(0, eq)] = entry.slice(eq + 1);
      }
    } catch {
      // not ours to read
    }
    return { pid, exe, argv, env };
  } catch {
    return undefined;
  }
}
