import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { printable, printableLines } from '../../core/base/ids';
import { loopStepTitle, loopTitle } from '../../core/jobs/title';
import type { LoopState } from '../../core/loop/loopState';
import { loopUsage } from '../../core/loop/reports';
import { isPinned } from '../../core/loop/snapshot';
import { formatUsage } from '../../core/usage/format';
import type { UsageSum } from '../../core/usage/sum';
import type { WorkspaceEngine } from '../../core/workspaceEngine';
import { isPageMessage, isPageState, linkTarget, type HostMessage, type PageMessage, type ReportModel } from '../../webview/reportProtocol';
import { Commands } from '../host/commandIds';
import type { EngineHost } from '../host/engineHost';
import { DisposableBase } from '../../core/base/disposable';
import { PlanIds } from '../plans/planIds';
import { buildPlanModel } from '../plans/planPage';
import { openSnapshotDiff } from './snapshotDocuments';

export const REPORT_VIEW_TYPE = 'mam.report';

/** What a panel shows: a loop's report, or a plan's page. */
type Subject = { kind: 'loop'; id: string } | { kind: 'plan'; id: string };

interface Panel {
  panel: vscode.WebviewPanel;
  folderIndex: number;
  subject: Subject;
  ready: boolean;
}

const keyOf = (subject: Subject): string => `${subject.kind}:${subject.id}`;

/**
 * The report webviews: one panel per loop (its review report) and per plan (its page: the tasks as
 * a graph of their needs), kept up to date while they run, restored after a window reload by the
 * serializer. The page gets its model only after it says it is ready, so nothing sent early is
 * lost; every message from it is checked before it is acted on.
 */
export class ReportPanels extends DisposableBase implements vscode.WebviewPanelSerializer {
  private readonly panels = new Map<string, Panel>();

  constructor(
    private readonly host: EngineHost,
    private readonly extensionUri: vscode.Uri,
  ) {
    super();
    this._register(vscode.window.registerWebviewPanelSerializer(REPORT_VIEW_TYPE, this));
    this._register(host.forEachFolder(({ folder, engine, jobs }) => [
      engine.core.loops.onDidChange(({ loop }) => {
        void this.update({ kind: 'loop', id: loop.id });
        // A plan's page shows its tasks' rounds.
        for (const entry of this.panels.values()) {
          if (entry.subject.kind === 'plan' && entry.folderIndex === folder.index && engine.core.plans.get(entry.subject.id)?.tasks.some((t) => t.loop_id === loop.id)) void this.update(entry.subject);
        }
      }),
      engine.core.plans.onDidChange((plan) => void this.update({ kind: 'plan', id: plan.id })),
      // A panel shows its loop's jobs: a change of one of them redraws it.
      jobs.onDidChangeJob(({ job }) => {
        for (const entry of this.panels.values()) {
          if (entry.subject.kind !== 'loop' || entry.folderIndex !== folder.index) continue;
          if (engine.core.loops.get(entry.subject.id)?.steps.some((s) => s.job_id === job.id)) void this.update(entry.subject);
        }
      }),
    ]));
  }

  /** The open panels (the extension-host tests look): each names its loop or its plan. */
  get open(): ReadonlyArray<{ loopId?: string; planId?: string; panel: vscode.WebviewPanel }> {
    return [...this.panels.values()].map((e) => ({ ...(e.subject.kind === 'loop' ? { loopId: e.subject.id } : { planId: e.subject.id }), panel: e.panel }));
  }

  /** Opens (or reveals) a loop's review report. */
  show(folderIndex: number, loopId: string): void {
    this.reveal(folderIndex, { kind: 'loop', id: loopId });
  }

  /** Opens (or reveals) a plan's page. */
  showPlan(folderIndex: number, planId: string): void {
    this.reveal(folderIndex, { kind: 'plan', id: planId });
  }

  private reveal(folderIndex: number, subject: Subject): void {
    const existing = this.panels.get(keyOf(subject));
    if (existing) {
      existing.panel.reveal();
      return;
    }
    const panel = vscode.window.createWebviewPanel(REPORT_VIEW_TYPE, this.title(folderIndex, subject), vscode.ViewColumn.Active, this.options());
    this.attach(panel, folderIndex, subject);
  }

  async deserializeWebviewPanel(panel: vscode.WebviewPanel, state: unknown): Promise<void> {
    await this.host.ready();
    if (!isPageState(state)) {
      panel.dispose();
      return;
    }
    panel.webview.options = this.options();
    this.attach(panel, state.folderIndex, 'planId' in state ? { kind: 'plan', id: state.planId } : { kind: 'loop', id: state.loopId });
  }

  private options(): vscode.WebviewPanelOptions & vscode.WebviewOptions {
    return { enableScripts: true, localResourceRoots: [vscode.Uri.joinPath(this.extensionUri, 'media')], enableFindWidget: true };
  }

  private attach(panel: vscode.WebviewPanel, folderIndex: number, subject: Subject): void {
    const key = keyOf(subject);
    const entry: Panel = { panel, folderIndex, subject, ready: false };
    this.panels.set(key, entry);
    panel.iconPath = vscode.Uri.joinPath(this.extensionUri, 'media', 'mam.svg');
    panel.webview.html = this.html(panel.webview, subject.kind === 'plan' ? 'Plan' : 'Review report');
    const subs = [
      panel.webview.onDidReceiveMessage((m: unknown) => {
        if (!isPageMessage(m)) return; // anything else from the page is ignored
        void this.handle(entry, m).catch((err: unknown) => vscode.window.showErrorMessage(`MAM: ${(err as Error).message}`));
      }),
      panel.onDidDispose(() => {
        this.panels.delete(key);
        for (const s of subs) s.dispose();
      }),
    ];
  }

  private async handle(entry: Panel, m: PageMessage): Promise<void> {
    const { folderIndex, subject } = entry;
    if (m.type === 'ready') {
      entry.ready = true;
      return this.update(subject);
    }
    if (subject.kind === 'plan') return this.handlePlan(folderIndex, subject.id, m);
    const loopId = subject.id;
    switch (m.type) {
      case 'openChanges':
        await vscode.commands.executeCommand(Commands.openChanges, { folderIndex, loopId, round: m.round });
        return;
      case 'openFileDiff':
        return openSnapshotDiff(this.host, folderIndex, loopId, m.round, m.path);
      case 'openLog':
        await vscode.commands.executeCommand(Commands.showJobLog, { folderIndex, jobId: m.jobId });
        return;
      case 'openLink':
        await this.openLink(folderIndex, loopId, m.href);
        return;
      default:
        return; // a plan page's message on a loop's report: ignored
    }
  }

  /** A plan page's messages: a task's loop report, the plan's run log. */
  private async handlePlan(folderIndex: number, planId: string, m: PageMessage): Promise<void> {
    if (m.type === 'openLoop') this.openTaskReport(folderIndex, planId, m.loopId);
    else if (m.type === 'openPlanLog') await vscode.commands.executeCommand(PlanIds.showLog, { folderIndex, planId });
  }

  /**
   * Opens the review report of a plan's task from its page: only a loop one of the plan's tasks
   * ran, whatever else the page asks for. Returns whether it opened one.
   */
  openTaskReport(folderIndex: number, planId: string, loopId: string): boolean {
    const plan = this.host.byFolderIndex(folderIndex)?.engine.core.plans.get(planId);
    if (!plan?.tasks.some((t) => t.loop_id === loopId)) return false;
    this.show(folderIndex, loopId);
    return true;
  }

  /**
   * Opens a link from a report, the task or a rebuttal (agent text): an https page through
   * `openExternal` (so VS Code's link protection asks about untrusted domains); a file only if it
   * is inside the loop's checkout or the workspace folder, in an editor (at `#L12`'s line).
   * Anything else is refused. Returns whether it opened something.
   */
  async openLink(folderIndex: number, loopId: string, href: string): Promise<boolean> {
    const target = linkTarget(href);
    const fe = this.host.byFolderIndex(folderIndex);
    const loop = fe?.engine.core.loops.get(loopId);
    if (!target || !fe || !loop) return false;
    if (target.kind === 'web') return vscode.env.openExternal(vscode.Uri.parse(target.url, true));
    const real = (p: string) => fs.promises.realpath(p).catch(() => undefined);
    const file = await real(path.resolve(loop.checkout, target.path));
    const roots = (await Promise.all([loop.checkout, fe.folder.uri.fsPath].map(real))).filter((r): r is string => r !== undefined);
    const within = (root: string, f: string) => {
      const rel = path.relative(root, f);
      return rel !== '..' && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel);
    };
    const inside = file !== undefined && roots.some((r) => within(r, file));
    if (!inside || !(await fs.promises.stat(file!)).isFile()) {
      void vscode.window.showWarningMessage(`MAM: the link “${printable(target.path, 120)}” is not a file in the loop's checkout; not opened.`);
      return false;
    }
    const line = target.line !== undefined ? new vscode.Position(target.line - 1, 0) : undefined;
    await vscode.window.showTextDocument(vscode.Uri.file(file!), { preview: true, selection: line && new vscode.Range(line, line) });
    return true;
  }

  /** Sends the loop's or plan's current model to its page (once the page is ready). */
  async update(subject: Subject): Promise<void> {
    const entry = this.panels.get(keyOf(subject));
    if (!entry?.ready) return;
    let message: HostMessage;
    if (subject.kind === 'plan') {
      const plan = buildPlanModel(this.host, entry.folderIndex, subject.id);
      if (!plan) return;
      message = { type: 'plan', plan };
    } else {
      const model = await buildModel(this.host, entry.folderIndex, subject.id);
      if (!model) return;
      message = { type: 'model', model };
    }
    entry.panel.title = this.title(entry.folderIndex, subject);
    await entry.panel.webview.postMessage(message);
  }

  private title(folderIndex: number, subject: Subject): string {
    const core = this.host.byFolderIndex(folderIndex)?.engine.core;
    if (subject.kind === 'plan') {
      const plan = core?.plans.get(subject.id);
      return `Plan: ${short((plan && printable(plan.title, 200)) || subject.id)}`;
    }
    const loop = core?.loops.get(subject.id);
    return `Review: ${short(loop ? printable(loopTitle(loop), 200) : subject.id)}`;
  }

  /** CSP default-src 'none': the page's script only with this render's nonce, styles only from media/. */
  private html(webview: vscode.Webview, what: string): string {
    const nonce = randomBytes(16).toString('base64');
    const media = (file: string) => webview.asWebviewUri(vscode.Uri.joinPath(this.extensionUri, 'media', file));
    return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src ${webview.cspSource}; img-src ${webview.cspSource}; font-src ${webview.cspSource}; script-src 'nonce-${nonce}';">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${media('report.css')}">
<title>${what}</title>
</head>
<body>
<main id="root"><p>Loading…</p></main>
<script nonce="${nonce}" src="${media('report.js')}"></script>
</body>
</html>`;
  }
}

/** A tab's title is short: 40 characters at most. */
function short(name: string): string {
  return name.length > 40 ? `${name.slice(0, 39)}…` : name;
}

/** Everything the page draws, from the loop file, its jobs, their audit logs and git. */
export async function buildModel(host: EngineHost, folderIndex: number, loopId: string): Promise<ReportModel | undefined> {
  const engine = host.byFolderIndex(folderIndex)?.engine;
  const loop = engine?.core.loops.get(loopId);
  if (!engine || !loop) return undefined;
  const jobs = loop.steps
    .filter((s) => !s.key.endsWith(':rebut'))
    .map((step) => {
      const job = engine.core.jobs.index.get(step.job_id) ?? engine.core.controlPlane.jobs.get(step.job_id);
      const events = engine.core.jobService.log(step.job_id).filter((e) => e.type === 'event').map((e) => ({ at: e.at, event: (e as { event: string }).event }));
      return {
        id: step.job_id, session: printable(step.session), step: printable(step.key, 200), title: printable(loopStepTitle(step), 200), round: step.round,
        state: job?.state ?? 'registered', reason: job?.reason ? printable(job.reason, 200) : null,
        dispatched_at: job?.dispatched_at ?? null, finished_at: job?.finished_at ?? null, events,
      };
    });
  const rounds = await Promise.all(
    loop.rounds.map(async (r) => ({
      n: r.n,
      status: r.status,
      identity: { base: r.identity.base, head: r.identity.head, tree: r.identity.tree },
      pinned: isPinned(r.identity),
      rebut: r.rebut ? printableLines(r.rebut) : null,
      children: (r.children ?? []).map((c) => ({ id: c.id, state: c.state, session: printable(c.session) })),
      // While a round is under review its verdicts are not in yet: show its reviewers as pending.
      reviews: r.reviews.length
        ? r.reviews.map((v) => ({ reviewer: printable(v.reviewer), job_id: v.job_id, verdict: v.verdict ?? null, text: printableLines(loop.steps.find((s) => s.key === v.step)?.text ?? '') }))
        : loop.steps.filter((s) => s.key.startsWith(`r${r.n}:review:`)).map((s) => ({ reviewer: printable(s.session), job_id: s.job_id, verdict: null, text: printableLines(s.text ?? '') })),
      // A round that pinned no snapshot (a `--type loop` job's reviewed what the worker reported) has no files.
      files: (isPinned(r.identity) ? await engine.changedFiles(r.identity, loop.checkout).catch(() => []) : []).map((f) => ({ status: f.status, path: f.path, label: printable(f.path, 400) })),
    })),
  );
  return {
    folderIndex,
    title: printable(loopTitle(loop), 200) || loop.id,
    loop: {
      id: loop.id, task: printableLines(loop.task), status: loop.status, reason: loop.reason ? printable(loop.reason, 200) : null,
      creator: printable(loop.creator), reviewers: loop.reviewers.map((r) => printable(r)), planner: loop.planner ? printable(loop.planner) : null,
      checkout: printable(loop.checkout, 400), base: loop.base, created_at: loop.created_at, updated_at: loop.updated_at,
    },
    rounds,
    jobs,
    usage: usageLines(engine, loop),
    now: new Date().toISOString(),
  };
}

/** What the loop's jobs spent, per round and in total, in the words `mam loop status` uses (money only as a labelled estimate). */
function usageLines(engine: WorkspaceEngine, loop: LoopState): ReportModel['usage'] {
  const usage = loopUsage(loop, (id) => engine.core.jobs.index.get(id) ?? engine.core.controlPlane.jobs.get(id));
  const prices = engine.prices();
  const line = (sum: UsageSum): string | null => (sum.measured > 0 ? (formatUsage(sum, prices) ?? null) : null);
  return { total: line(usage.total), rounds: usage.rounds.map((r) => ({ n: r.n, text: line(r.usage) })) };
}
