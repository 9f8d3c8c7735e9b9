import * as vscode from 'vscode';
import { formatEntry } from '../../core/jobs/formatLog';
import type { EngineHost } from '../host/engineHost';
import { DisposableBase } from '../../core/base/disposable';
import { UriSchemes } from '../shared/uriSchemes';

/** `mam-log:/<folder index>/<job id>.log`. */
export function jobLogUri(folderIndex: number, jobId: string): vscode.Uri {
  return vscode.Uri.from({ scheme: UriSchemes.jobLog, path: `/${folderIndex}/${jobId}.log` });
}

/**
 * A job's audit log as a read-only document that follows new events: the content provider is
 * told the document changed whenever its job does.
 */
export class JobLogProvider extends DisposableBase implements vscode.TextDocumentContentProvider {
  private readonly changed = this._register(new vscode.EventEmitter<vscode.Uri>());
  readonly onDidChange = this.changed.event;

  constructor(private readonly host: EngineHost) {
    super();
    this._register(host.onDidChangeJob(({ folder, change }) => this.changed.fire(jobLogUri(folder.index, change.job.id))));
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    const m = /^\/(\d+)\/(.+)\.log$/.exec(uri.path);
    const fe = m ? this.host.byFolderIndex(Number(m[1])) : undefined;
    if (!m || !fe) return 'This job log belongs to a folder that is no longer open.';
    const jobId = m[2]!;
    const job = fe.engine.job(jobId);
    const header = job
      ? [
          `# job ${job.id}: ${job.title ?? ''}`,
          `# session ${job.session} · ${job.type}${job.role ? ` · ${job.role}` : ''} · ${job.state}${job.reason ? ` (${job.reason})` : ''}`,
          `# brief ${job.brief ?? '-'}`,
          ...(fe.engine.paneTextFile(jobId) ? [`# what its pane showed: ${fe.engine.paneTextFile(jobId)} (MAM: Show Pane Output)`] : []),
          '',
        ]
      : [`# job ${jobId}`, ''];
    return [...header, ...fe.engine.jobLog(jobId).map(formatEntry), ''].join('\n');
  }
}
