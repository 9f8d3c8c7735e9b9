import { DisposableBase } from '../base/disposable';
import type { JobEngine } from '../jobs/jobEngine';
import { isTerminal, type JobRecord } from '../store/jobSchema';
import type { LoopState } from '../loop/loopState';

/**
 * Turns what the engine reports into the demo's running commentary, one line per meaningful event:
 * a job typed into its pane, started, its agent's progress notes, its end; and the loop's own
 * messages about rounds, verdicts and promoted reports. Jobs are labelled by their part in the
 * demo (`survey`, `implement`, `r1:review:demo-reviewer-a` …) rather than by their IDs.
 */
export class DemoNarrator extends DisposableBase {
  private readonly labels = new Map<string, string>();
  private readonly seen = new Map<string, { state: string; delivery: string | null | undefined }>();
  private readonly started = Date.now();

  constructor(
    engine: JobEngine,
    private readonly sessions: ReadonlySet<string>,
    private readonly say: (line: string) => void,
  ) {
    super();
    this._register(engine.ledger.onDidChangeJob(({ job }) => this.jobChanged(job)));
    this._register(
      engine.ledger.onDidApplyEvent(({ job, payload }) => {
        if (payload.event === 'progress' && this.ours(job) && payload.detail) this.line(this.labelOf(job), `${job.session}: ${payload.detail}`);
      }),
    );
  }

  /** Names a job before it is submitted, so its first line already carries the label. */
  label(jobId: string, label: string): void {
    this.labels.set(jobId, label);
  }

  /** A line of the demo's own (a heading, a setup step). */
  note(text: string): void {
    this.line('setup', text);
  }

  heading(text: string): void {
    this.say('');
    this.say(`── ${text} ${'─'.repeat(Math.max(3, 74 - text.length))}`);
  }

  /** The loop's messages, except those about single jobs (the job lines say those, with more detail). */
  loopProgress(loop: LoopState, message: string): void {
    for (const step of loop.steps) this.labels.set(step.job_id, step.key);
    if (loop.steps.some((s) => message.startsWith(`${s.key}: `))) return;
    this.line('loop', message);
  }

  private jobChanged(job: JobRecord): void {
    if (!this.ours(job)) return;
    const before = this.seen.get(job.id);
    this.seen.set(job.id, { state: job.state, delivery: job.delivery });
    const label = this.labelOf(job);
    if (!before) this.line(label, `job ${job.id} for ${job.session}: ${shorten(job.title ?? '', 60)}`);
    if (job.delivery !== before?.delivery && (job.delivery === 'typed' || job.delivery === 'unconfirmed')) {
      this.line(label, `typed into ${job.session}'s pane${job.delivery === 'unconfirmed' ? ' (Enter not confirmed on screen; its events decide)' : ''}`);
    }
    if (job.state === before?.state) return;
    if (job.state === 'started') this.line(label, `${job.session} started`);
    else if (isTerminal(job.state)) {
      this.line(label, `${job.session} ${job.state}${job.reason ? ` (${job.reason})` : ''}${job.detail ? `: ${job.detail.split('\n')[0]}` : ''}`);
    }
  }

  private ours(job: JobRecord): boolean {
    return this.sessions.has(job.target?.name ?? job.session);
  }

  private labelOf(job: JobRecord): string {
    return this.labels.get(job.id) ?? 'job';
  }

  private line(label: string, text: string): void {
    const seconds = ((Date.now() - this.started) / 1000).toFixed(1).padStart(6);
    this.say(`${seconds}s  ${label.padEnd(26)} ${text}`);
  }
}

function shorten(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
