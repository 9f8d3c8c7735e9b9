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
import { openSnapshotDiff } from './snapshotDocuments';

export const REPORT_VIEW_TYPE = 'mam.report';

/**
 * The review-report webviews: one panel per loop, kept up to date while the loop runs, restored
 * after a window reload by the serializer. The page gets the model only after it says it is ready,
 * so nothing sent early is lost; every message from it is checked before it is acted on.
 */
export class ReportPanels extends DisposableBase implements vscode.WebviewPanelSerializer {
  private readonly panels = new Map<string, { panel: vscode.WebviewPanel; folderIndex: number; ready: boolean }>();

  constructor(
    private readonly host: EngineHost,
    private readonly extensionUri: vscode.Uri,
  ) {
    super();
    this._register(vscode.window.registerWebviewPanelSerializer(REPORT_VIEW_TYPE, this));
    this._register(host.forEachFolder(({ folder, engine, jobs }) => [
      engine.core.loops.onDidChange(({ loop }) => void this.update(loop.id)),
      // A panel shows its loop's jobs: a change of one of them redraws it.
      jobs.onDidChangeJob(({ job }) => {
        for (const [loopId, entry] of this.panels) {
          if (entry.folderIndex !== folder.index) continue;
          if (engine.core.loops.get(loopId)?.steps.some((s) => s.job_id === job.id)) void this.update(loopId);
        }
      }),
    ]));
  }

  /** The open report panels (the extension-host tests look). */
  get open(): ReadonlyArray<{ loopId: string; panel: vscode.WebviewPanel }> {
    return [...this.panels].map(([loopId, e]) => ({ loopId, panel: e.panel }));
  }

  show(folderIndex: number, loopId: string): void {
    const existing = this.panels.get(loopId);
    if (existing) {
      existing.panel.reveal();
      return;
    }
    const loop = this.host.byFolderIndex(folderIndex)?.engine.core.loops.get(loopId);
    const panel = vscode.window.createWebviewPanel(REPORT_VIEW_TYPE, title(loop, loopId), vscode.ViewColumn.Active, this.options());
    this.attach(panel, folderIndex, loopId);
  }

  async deserializeWebviewPanel(panel: vscode.WebviewPanel, state: unknown): Promise<void> {
    await this.host.ready();
    if (!isPageState(state)) {
      panel.dispose();
      return;
    }
    panel.webview.options = this.options();
    this.attach(panel, state.folderIndex, state.loopId);
  }

  private options(): vscode.WebviewPanelOptions & vscode.WebviewOptions {
    return { enableScripts: true, localResourceRoots: [vscode.Uri.joinPath(this.extensionUri, 'media')], enableFindWidget: true };
  }

  private attach(panel: vscode.WebviewPanel, folderIndex: number, loopId: string): void {
    const entry = { panel, folderIndex, ready: false };
    this.panels.set(loopId, entry);
    panel.iconPath = vscode.Uri.joinPath(this.extensionUri, 'media', 'mam.svg');
    panel.webview.html = this.html(panel.webview);
    const subs = [
      panel.webview.onDidReceiveMessage((m: unknown) => {
        if (!isPageMessage(m)) return; // anything else from the page is ignored
        void this.handle(folderIndex, loopId, m).catch((err: unknown) => vscode.window.showErrorMessage(`MAM: ${(err as Error).message}`));
      }),
      panel.onDidDispose(() => {
        this.panels.delete(loopId);
        for (const s of subs) s.dispose();
      }),
    ];
  }

  private async handle(folderIndex: number, loopId: string, m: PageMessage): Promise<void> {
    switch (m.type) {
      case 'ready':
        this.panels.get(loopId)!.ready = true;
        return this.update(loopId);
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
    }
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

  /** Sends the loop's current model to its page (once the page is ready). */
  async update(loopId: string): Promise<void> {
    const entry = this.panels.get(loopId);
    if (!entry?.ready) return;
    const model = await buildModel(this.host, entry.folderIndex, loopId);
    if (!model) return;
    entry.panel.title = title(this.host.byFolderIndex(entry.folderIndex)?.engine.core.loops.get(loopId), loopId);
    const message: HostMessage = { type: 'model', model };
    await entry.panel.webview.postMessage(message);
  }

  /** CSP default-src 'none': the page's script only with this render's nonce, styles only from media/. */
  private html(webview: vscode.Webview): string {
    const nonce = randomBytes(16).toString('base64');
    const media = (file: string) => webview.asWebviewUri(vscode.Uri.joinPath(this.extensionUri, 'media', file));
    return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src ${webview.cspSource}; img-src ${webview.cspSource}; font-src ${webview.cspSource}; script-src 'nonce-${nonce}';">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${media('report.css')}">
<title>Review report</title>
</head>
<body>
<main id="root"><p>Loading the report…</p></main>
<script nonce="${nonce}" src="${media('report.js')}"></script>
</body>
</html>`;
  }
}

function title(loop: LoopState | undefined, loopId: string): string {
  const name = loop ? printable(loopTitle(loop), 200) : loopId;
  return `Review: ${name.length > 40 ? `${name.slice(0, 39)}…` : name}`;
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
