import { AGENT_NAMES } from '../../core/agents/adapter';
import { MUX_KINDS, SESSION_ROLES, type SessionRow } from '../../core/store/sessionSchema';
import { defineTool, type Tool } from '../tool';
import { arg, input } from '../toolInput';

const SESSION = arg.text.required({ description: 'the session name', max: 64 });

function line(row: SessionRow): string {
  return `${row.name} (${row.agent}, ${row.role}): ${row.status}${row.current_job ? `, job ${row.current_job}` : ''}`;
}

const list = defineTool({
  name: 'session_list',
  title: 'List sessions',
  description: "The workspace's registered agent sessions (name, agent, role, status, pane, current job, conversation), from the registry; no multiplexer is asked.",
  input: input({}),
  acts: false,
  hints: { readOnlyHint: true },
  cli: 'mam session list --json',
  async run(_args, { core }) {
    const sessions = await core.controlPlane.sessions.list();
    return { data: { sessions }, text: sessions.length ? sessions.map(line).join('\n') : 'No sessions registered in this workspace.' };
  },
});

const create = defineTool({
  name: 'session_create',
  title: 'Create a session',
  description: "Starts an agent in a new pane of the workspace's multiplexer server and registers it; resolves once the agent shows it is ready for input.",
  input: input({
    name: arg.text.required({ description: 'the session name: letters, digits, . _ - (up to 64)', max: 64 }),
    agent: arg.text.required({ description: 'the agent CLI', enum: AGENT_NAMES }),
    role: arg.text({ description: 'its role (default worker)', enum: SESSION_ROLES }),
    cwd: arg.text({ description: 'where the agent runs, relative to the workspace (default: the workspace)', max: 4096 }),
    mux: arg.text({ description: 'the multiplexer (default: MAM_MUX, else tmux)', enum: MUX_KINDS }),
    server: arg.text({ description: "the multiplexer server (default: the workspace's own)", max: 128 }),
    command: arg.texts({ description: "the program and its arguments, instead of the agent's own (never run by a shell)", max: 200, itemMax: 4096 }),
  }),
  acts: true,
  hints: { destructiveHint: false, openWorldHint: false },
  cli: 'mam session create --agent A --name N [--role R --cwd DIR --mux M --server S --command "…"]',
  async run(a, { core }) {
    const row = await core.sessions.create({
      name: a.name, agent: a.agent, baseDir: core.workspace,
      ...(a.role !== undefined ? { role: a.role } : {}), ...(a.cwd !== undefined ? { cwd: a.cwd } : {}),
      ...(a.mux !== undefined ? { mux: a.mux } : {}), ...(a.server !== undefined ? { server: a.server } : {}),
      ...(a.command !== undefined ? { command: a.command } : {}),
    });
    return { data: { session: row }, text: `Created session ${row.name} (${row.agent}, ${row.role}) in pane ${row.target} of ${row.mux} server ${row.server}.` };
  },
});

const send = defineTool({
  name: 'session_send',
  title: 'Type a line into a session',
  description: "Types one line into a running agent's pane, verified like a job's delivery: the agent must be ready, the text must land, Enter must be taken.",
  input: input({ session: SESSION, text: arg.text.required({ description: 'the line (one line, typed literally, never run by a shell)', max: 65_536 }) }),
  acts: true,
  hints: { destructiveHint: false, openWorldHint: false },
  cli: 'mam session send NAME --text TEXT',
  async run(a, { core }) {
    const report = await core.sessions.send(a.session, a.text);
    return { data: { session: a.session, delivery: report }, text: report.submitted === 'unconfirmed' ? `Typed into ${a.session}, but the screen did not react to Enter.` : `Sent to ${a.session}.` };
  },
});

const stop = defineTool({
  name: 'session_stop',
  title: 'Stop a session',
  description: 'Asks the agent to exit, closes its pane, and keeps its conversation for session_resume (purge_conversation: deletes it instead).',
  input: input({ session: SESSION, purge_conversation: arg.flag({ description: "delete the agent's stored conversation instead of keeping it" }) }),
  acts: true,
  hints: { destructiveHint: true, idempotentHint: true, openWorldHint: false },
  cli: 'mam session stop NAME [--purge-conversation --yes]',
  async run(a, { core }) {
    const purge = a.purge_conversation === true;
    const result = await core.sessions.stop(a.session, { purgeConversation: purge, yes: purge });
    const r = result.row;
    return {
      data: { session: r, already_stopped: result.alreadyStopped, purged: result.purged ?? null },
      text: `${result.alreadyStopped ? `Session ${r.name} was already ${r.status}.` : `Stopped session ${r.name}.`}${result.purged !== undefined ? ' Its conversation was deleted.' : r.resumable ? ' It can be resumed.' : ' It cannot be resumed: no saved conversation was found.'}`,
    };
  },
});

const resume = defineTool({
  name: 'session_resume',
  title: 'Resume a session',
  description: 'Restarts a stopped session in its saved conversation, in the folder it ran in.',
  input: input({ session: SESSION }),
  acts: true,
  hints: { destructiveHint: false, openWorldHint: false },
  cli: 'mam session resume NAME',
  async run(a, { core }) {
    const row = await core.sessions.resume(a.session, { baseDir: core.workspace });
    return { data: { session: row }, text: `Resumed session ${row.name} in pane ${row.target}${row.conversation_id ? ` (conversation ${row.conversation_id})` : ''}.` };
  },
});

export const sessionTools: readonly Tool[] = [list, create, send, stop, resume];
