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
    this._register(host.forEachFolder((fe) => fe.jobs.onDidChangeJob(({ job }) => this.changed.fire(jobLogUri(fe.folder.index, job.id)))));
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    const m = /^\/(\d+)\/(.+)\.log$/.exec(uri.path);
    const fe = m ? this.host.byFolderIndex(Number(m[1])) : undefined;
    if (!m || !fe) return 'This job log belongs to a folder that is no longer open.';
    const jobId = m[2]!;
    const { jobService } = fe.engine.core;
    const job = jobService.index.get(jobId);
    const pane = jobService.paneTextFile(jobId);
    const header = job
      ? [
          `# job ${job.id}: ${job.title ?? ''}`,
          `# session ${job.session} · ${job.type}${job.role ? ` · ${job.role}` : ''} · ${job.state}${job.reason ? ` (${job.reason})` : ''}`,
          `# brief ${job.brief ?? '-'}`,
          ...(pane ? [`# what its pane showed: ${pane} (MAM: Show Pane Output)`] : []),
          '',
        ]
      : [`# job ${jobId}`, ''];
    return [...header, ...jobService.log(jobId).map(formatEntry), ''].join('\n');
  }
}
