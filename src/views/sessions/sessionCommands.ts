import * as vscode from 'vscode';
import { AGENT_NAMES } from '../../core/agents/adapter';
import { ExitCode } from '../../core/base/errors';
import { nameProblem, printable } from '../../core/base/ids';
import { splitWords } from '../../core/base/shellWords';
import { isOpen } from '../../core/store/jobSchema';
import { SESSION_ROLES, type SessionRow } from '../../core/store/sessionSchema';
import { Commands } from '../host/commandIds';
import type { EngineHost, FolderEngine } from '../host/engineHost';
import { runSteps } from '../shared/multiStep';
import { folderFor, pickFolders, pickSession, reportErrors, type FolderRef, type SessionRef } from '../shared/picks';

const ROLE_HINTS: Record<string, string> = {
  orchestrator: 'plans and delegates to the other sessions',
  planner: 'writes the plan before a review loop',
  developer: 'writes code',
  creator: 'implements and fixes in review loops',
  reviewer: 'reviews in review loops',
  worker: 'takes delegated jobs',
};

const AGENT_HINTS: Record<(typeof AGENT_NAMES)[number], string> = {
  claude: 'Claude Code',
  codex: 'OpenAI Codex CLI',
  gemini: 'Gemini CLI',
  opencode: 'opencode',
  copilot: 'GitHub Copilot CLI',
  qwen: 'Qwen Code',
  hermes: 'Nous Research Hermes Agent',
  grok: 'xAI Grok CLI',
  agy: 'Google Antigravity CLI',
  shell: 'any command you give',
};

/** Sessions: create, stop, resume, attach, send, purge, copy the conversation ID. */
export function registerSessionCommands(host: EngineHost): vscode.Disposable[] {
  const running = (r: { status: string }) => r.status === 'running' || r.status === 'starting';
  return [
    vscode.commands.registerCommand(Commands.createSession, (ref?: FolderRef) => reportErrors('creating the session', () => createSession(host, ref))),

    vscode.commands.registerCommand(Commands.stopSession, (ref?: SessionRef) =>
      reportErrors('stopping the session', async () => {
        const picked = await pickSession(host, ref, running, 'Stop Session');
        if (!picked) return;
        await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: `MAM: ${host.where(picked.fe.folder.index)}stopping ${picked.row.name}…` }, () => picked.fe.engine.core.sessions.stop(picked.row.name));
      }),
    ),

    vscode.commands.registerCommand(Commands.stopAllSessions, (ref?: FolderRef) => reportErrors('stopping the sessions', () => stopAll(host, ref))),

    vscode.commands.registerCommand(Commands.resumeSession, (ref?: SessionRef) =>
      reportErrors('resuming the session', async () => {
        const picked = await pickSession(host, ref, (r) => !running(r) && r.resumable, 'Resume Session');
        if (!picked) return;
        const where = host.where(picked.fe.folder.index);
        const row = await Promise.resolve(vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: `MAM: ${where}resuming ${picked.row.name}…` }, () => picked.fe.engine.core.sessions.resume(picked.row.name, { baseDir: picked.fe.engine.workspace })))
          .catch((err: unknown) => showIfAttention(host, err, picked.fe.folder.index, picked.row.name));
        if (!row) return;
        void vscode.window.showInformationMessage(`MAM: ${where}${row.name} resumed${row.conversation_id ? ` in conversation ${row.conversation_id}` : ''}.`, 'Attach').then((a) => a && vscode.commands.executeCommand(Commands.attachSession, { folderIndex: picked.fe.folder.index, name: row.name }));
      }),
    ),

    vscode.commands.registerCommand(Commands.resumeAllSessions, (ref?: FolderRef) =>
      reportErrors('resuming the sessions', async () => {
        for (const fe of await pickFolders(host, ref, 'Resume All Sessions')) await resumeAll(host, fe);
      }),
    ),

    vscode.commands.registerCommand(Commands.attachSession, (ref?: SessionRef) =>
      reportErrors('attaching', async () => {
        const picked = await pickSession(host, ref, running, 'Attach to Session');
        if (!picked) return;
        const [shellPath, ...shellArgs] = await picked.fe.engine.core.sessions.attachArgv(picked.row.name);
        const terminal = vscode.window.createTerminal({ name: `MAM: ${picked.row.name}`, shellPath: shellPath!, shellArgs, iconPath: new vscode.ThemeIcon('terminal-tmux'), cwd: picked.row.cwd });
        terminal.show();
      }),
    ),

    vscode.commands.registerCommand(Commands.sendMessage, (ref?: SessionRef) =>
      reportErrors('sending the message', async () => {
        const picked = await pickSession(host, ref, (r) => r.status === 'running', 'Send Message to Session');
        if (!picked) return;
        const text = await vscode.window.showInputBox({
          title: `Message to ${picked.row.name}`,
          prompt: 'Typed into the agent as one line, exactly as written (nothing is run by a shell).',
          validateInput: (v) => (v.trim() === '' ? 'Write something to send.' : undefined),
        });
        if (text === undefined) return;
        const report = await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: `MAM: ${host.where(picked.fe.folder.index)}sending to ${picked.row.name}…` }, () => picked.fe.engine.core.sessions.send(picked.row.name, text));
        if (report.submitted === 'unconfirmed') void vscode.window.showWarningMessage(`MAM: ${host.where(picked.fe.folder.index)}typed into ${picked.row.name}, but its screen did not react to Enter; have a look.`, 'Attach').then((a) => a && vscode.commands.executeCommand(Commands.attachSession, { folderIndex: picked.fe.folder.index, name: picked.row.name }));
      }),
    ),

    vscode.commands.registerCommand(Commands.purgeConversation, (ref?: SessionRef) =>
      reportErrors('purging the conversation', async () => {
        const picked = await pickSession(host, ref, (r) => r.conversation_id !== null, 'Purge Conversation');
        if (!picked) return;
        const yes = 'Stop and Delete';
        const answer = await vscode.window.showWarningMessage(
          `Delete the stored ${picked.row.agent} conversation of ${picked.row.name} for good?`,
          { modal: true, detail: `Conversation ${picked.row.conversation_id}. The session stops and can no longer be resumed.` },
          yes,
        );
        if (answer !== yes) return;
        await picked.fe.engine.core.sessions.stop(picked.row.name, { purgeConversation: true, yes: true });
      }),
    ),

    vscode.commands.registerCommand(Commands.copyConversationId, (ref?: SessionRef) =>
      reportErrors('copying', async () => {
        const picked = await pickSession(host, ref, (r) => r.conversation_id !== null, 'Copy Conversation ID');
        if (!picked?.row.conversation_id) return;
        await vscode.env.clipboard.writeText(picked.row.conversation_id);
        void vscode.window.setStatusBarMessage(`MAM: copied ${picked.row.conversation_id}`, 3000);
      }),
    ),
  ];
}

/** Stops every running session of the folders picked (every folder, or the row's), after one question naming how many. */
async function stopAll(host: EngineHost, ref: FolderRef | undefined): Promise<void> {
  const folders = await pickFolders(host, ref, 'Stop All Sessions');
  if (folders.length === 0) return;
  const targets: Array<{ fe: FolderEngine; row: SessionRow }> = [];
  for (const fe of folders) for (const row of await fe.engine.core.controlPlane.sessions.list()) if (row.status === 'running' || row.status === 'starting') targets.push({ fe, row });
  // Named by folder when the sessions are of one folder among several; "in every folder" when they may be of more.
  const where = folders.length === 1 ? host.where(folders[0]!.folder.index) : '';
  const inFolders = folders.length > 1 ? ' in every folder' : '';
  if (targets.length === 0) return void vscode.window.showInformationMessage(`MAM: ${where}no session is running${inFolders}.`);
  const busy = targets.filter((t) => t.row.current_job).length;
  const yes = targets.length === 1 ? 'Stop Session' : `Stop ${targets.length} Sessions`;
  const one = targets.length === 1;
  const working = busy === 0 ? '' : one ? 'It is working on a job. ' : `${busy} of them ${busy === 1 ? 'is' : 'are'} working on a job. `;
  const named = (t: { fe: FolderEngine; row: SessionRow }) => (folders.length > 1 && host.multiRoot ? `${t.row.name} (${t.fe.folder.name})` : t.row.name);
  const answer = await vscode.window.showWarningMessage(
    one ? `Stop the running session ${named(targets[0]!)}${where ? ` in ${folders[0]!.folder.name}` : ''}?` : `Stop all ${targets.length} running sessions${where ? ` in ${folders[0]!.folder.name}` : inFolders}?`,
    { modal: true, detail: `${working}${one ? 'It keeps' : 'Each keeps'} its conversation: Resume brings it back.` },
    yes,
  );
  if (answer !== yes) return;
  const results = await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: `MAM: ${where}stopping ${targets.length} session${targets.length === 1 ? '' : 's'}…` }, () =>
    Promise.allSettled(targets.map((t) => t.fe.engine.core.sessions.stop(t.row.name))),
  );
  const failed = results.flatMap((r, i) => (r.status === 'rejected' ? [`${named(targets[i]!)} (${(r.reason as Error).message})`] : []));
  if (failed.length) void vscode.window.showErrorMessage(`MAM: ${where}could not stop ${failed.join(', ')}.`);
}

/** Resume All for one folder: every session that lost its pane comes back; one message says how it went. */
async function resumeAll(host: EngineHost, fe: FolderEngine): Promise<void> {
  const where = host.where(fe.folder.index);
  const results = await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: `MAM: ${where}resuming every session that lost its pane…` }, () => fe.engine.resumeAllSessions());
  if (results.length === 0) return void vscode.window.showInformationMessage(`MAM: ${where}nothing to resume; every session that should run is running.`);
  const resumed = results.filter((r) => r.outcome === 'resumed').map((r) => r.name);
  const other = results.filter((r) => r.outcome !== 'resumed');
  if (other.length === 0) return void vscode.window.showInformationMessage(`MAM: ${where}resumed ${resumed.join(', ')}, each in its own conversation.`);
  const first = other[0]!;
  void vscode.window
    .showWarningMessage(`MAM: ${where}${resumed.length ? `resumed ${resumed.join(', ')}; ` : ''}${other.map((r) => `${r.name} ${r.outcome.replace('_', ' ')}`).join(', ')}. ${first.detail}`, ...(first.outcome === 'needs_attention' ? ['Attach'] : []))
    .then((a) => a && vscode.commands.executeCommand(Commands.attachSession, { folderIndex: fe.folder.index, name: first.name }));
}

async function createSession(host: EngineHost, ref: FolderRef | undefined): Promise<void> {
  const fe = await folderFor(host, ref, 'Create Session');
  if (!fe) return;
  const where = host.where(fe.folder.index);
  const taken = new Set((await fe.engine.core.controlPlane.sessions.list()).map((r) => r.name));
  const agents = agentItems((agent) => fe.engine.core.sessions.programProblem(agent, fe.folder.uri.fsPath));
  const roles = SESSION_ROLES.map((r) => ({ label: r, description: ROLE_HINTS[r] }));
  const onboardings = [
    { label: 'Onboard it', description: 'recommended', detail: 'Delegate a first job that teaches the agent how to report on jobs, and wait for it.', value: true },
    { label: 'Skip onboarding', detail: 'The session starts; its first job brief still explains the protocol.', value: false },
  ];
  const chosen: { agent?: AgentItem; command?: string; role?: (typeof roles)[number]; name?: string; onboard?: (typeof onboardings)[number] } = {};
  let suggested: string | undefined;
  const done = await runSteps('Create Session', [
    { run: async (input) => void (chosen.agent = await input.pick({ placeholder: 'Which agent? Installed CLIs first; shell runs any command', items: agents, active: chosen.agent, matchOnDescription: true })) },
    {
      when: () => chosen.agent?.label === 'shell',
      run: async (input) =>
        void (chosen.command = await input.input({ placeholder: 'The command to run, e.g. python3 -m my_agent --flag', prompt: 'Split into words like a shell would; nothing is expanded or run by a shell.', value: chosen.command, validate: (v) => (v.trim() ? undefined : 'Give a command.') })),
    },
    { run: async (input) => void (chosen.role = await input.pick({ placeholder: 'Its role', items: roles, active: chosen.role ?? roles.find((r) => r.label === 'worker'), matchOnDescription: true })) },
    {
      run: async (input) =>
        void (chosen.name = await input.input({
          placeholder: 'Its name',
          prompt: 'Letters, digits, ".", "_" and "-"; up to 64.',
          // A name the user typed survives Back; a suggestion follows the role and agent.
          value: chosen.name && chosen.name !== suggested ? chosen.name : (suggested = nextFreeName(`${chosen.role!.label}-${chosen.agent!.label}`, taken)),
          validate: (v) => nameProblem(v, 'the name') ?? (taken.has(v) ? `a session named ${v} already exists` : undefined),
        })),
    },
    { run: async (input) => void (chosen.onboard = await input.pick({ placeholder: 'Onboard it with a first job?', items: onboardings, active: chosen.onboard })) },
  ]);
  if (!done) return;
  const [agent, role, name, onboard, command] = [chosen.agent!, chosen.role!, chosen.name!, chosen.onboard!, chosen.agent!.label === 'shell' ? chosen.command : undefined];
  await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: `MAM: ${where}${name}`, cancellable: true }, async (progress, token) => {
    progress.report({ message: `starting ${agent.label}…` });
    const row = await fe.engine.core.sessions
      .create({ name, agent: agent.label, role: role.label, baseDir: fe.folder.uri.fsPath, ...(command ? { command: splitWords(command) } : {}) })
      .catch((err: unknown) => showIfAttention(host, err, fe.folder.index, name));
    if (!row) return;
    await fe.engine.start();
    if (token.isCancellationRequested) return;
    if (!onboard.value) {
      void vscode.window.showInformationMessage(`MAM: ${where}${row.name} is running.`, 'Attach').then((a) => a && vscode.commands.executeCommand(Commands.attachSession, { folderIndex: fe.folder.index, name: row.name }));
      return;
    }
    progress.report({ message: 'onboarding (the agent reads its first brief)…' });
    // This notification tells how the onboarding ended (the Notifier leaves onboarding jobs to their caller: their origin says so).
    const { jobService } = fe.engine.core;
    const onboarding = jobService.onboard(row.name);
    const cancelled = new Promise<'cancelled'>((resolve) => token.onCancellationRequested(() => resolve('cancelled')));
    const outcome = await Promise.race([onboarding, cancelled]);
    if (outcome === 'cancelled') {
      // The session's open onboarding job, found by its origin.
      const open = jobService.index.list().find((j) => j.origin?.kind === 'onboarding' && j.origin.by === row.name && isOpen(j.state));
      if (open) await jobService.cancel(open.id);
      void vscode.window.showInformationMessage(`MAM: ${where}onboarding of ${row.name} cancelled; the session is kept.`);
      return;
    }
    if (outcome.exitCode === ExitCode.ok) return void vscode.window.showInformationMessage(`MAM: ${where}${row.name} is onboarded and ready for jobs.`);
    const { job } = outcome;
    // What the agent said (its detail) is its own text: printable only.
    const why = `${job.reason ?? job.state}${job.detail ? `: ${printable(job.detail, 200)}` : ''}`;
    void vscode.window.showWarningMessage(`MAM: ${where}onboarding of ${row.name} ${outcome.exitCode === ExitCode.onboardTimeout ? 'did not finish in time' : 'failed'} (${why}); the session is kept.`, 'Attach', 'Show Log').then((a) => {
      if (a === 'Attach') void vscode.commands.executeCommand(Commands.attachSession, { folderIndex: fe.folder.index, name: row.name });
      if (a === 'Show Log') void vscode.commands.executeCommand(Commands.showJobLog, { folderIndex: fe.folder.index, jobId: job.id });
    });
  });
}

/**
 * An agent that waits on a screen only the user should answer (a first-run dialog) is not an
 * error: the session is there. Say what it shows, offer Attach, and resolve with nothing.
 */
function showIfAttention(host: EngineHost, err: unknown, folderIndex: number, name: string): undefined {
  if ((err as { code?: unknown } | undefined)?.code !== 'needs_attention') throw err;
  const message = (err as Error).message.replace(/ Attach with: .*$/, '');
  void vscode.window.showWarningMessage(`MAM: ${host.where(folderIndex)}${message}`, 'Attach').then((a) => a && vscode.commands.executeCommand(Commands.attachSession, { folderIndex, name }));
  return undefined;
}

function nextFreeName(base: string, taken: ReadonlySet<string>): string {
  if (!taken.has(`${base}-1`)) return `${base}-1`;
  for (let i = 2; ; i++) if (!taken.has(`${base}-${i}`)) return `${base}-${i}`;
}

type AgentItem = vscode.QuickPickItem & { label: string };

/**
 * The agents, those whose CLI can start here first (under "installed"), then the rest, each saying
 * why not. `problem` is checked once per agent when the pick opens (a PATH lookup, no process).
 */
export function agentItems(problem: (agent: string) => string | undefined): AgentItem[] {
  const checked = AGENT_NAMES.map((name) => ({ name, problem: problem(name) }));
  const ready = checked.filter((a) => !a.problem);
  const missing = checked.filter((a) => a.problem);
  const separator = (label: string): AgentItem => ({ label, kind: vscode.QuickPickItemKind.Separator });
  return [
    separator('installed'),
    ...ready.map((a) => ({ label: a.name, description: AGENT_HINTS[a.name] })),
    ...(missing.length ? [separator('not installed')] : []),
    ...missing.map((a) => ({ label: a.name, description: `${AGENT_HINTS[a.name]} · ${/not found on PATH/.test(a.problem!) ? 'not found on PATH' : 'not an executable file'}` })),
  ];
}
