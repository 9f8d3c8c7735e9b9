import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { DisposableBase } from '../base/disposable';
import { Emitter } from '../base/emitter';
import { UsageError } from '../base/errors';
import type { Logger } from '../base/log';
import type { JobEngine } from '../jobs/jobEngine';
import type { LoopRequest } from './loopRequest';
import { LoopRunner } from './loopRunner';
import { cancelLoop } from './loopCancel';
import { LoopStore, type LoopState } from './loopState';

/** A loop moved on: its state, and the step's message when it moved here. */
export interface LoopChange {
  loop: LoopState;
  message?: string;
}

/**
 * The review loops of one workspace for a long-lived host (the extension): list them, run, resume
 * and cancel them, and hear each step — of a loop run here, or (through `changedOnDisk`) of one
 * another process runs. `prepare` connects the jobs engine before a loop runs.
 */
export class LoopService extends DisposableBase {
  readonly loops: LoopStore;
  private readonly changed = this._register(new Emitter<LoopChange>());
  readonly onDidChange = this.changed.event;

  constructor(
    private readonly jobs: JobEngine,
    private readonly logger: Logger,
    private readonly prepare: () => Promise<void>,
  ) {
    super();
    this.loops = new LoopStore(jobs.deps.controlPlane.paths);
  }

  /** Every loop, newest first. */
  list(): LoopState[] {
    return this.loops.list();
  }

  /** The loops, newest first, and the loop files that cannot be read, with why. */
  listing(): ReturnType<LoopStore['listing']> {
    return this.loops.listing();
  }

  /** A loop by ID; undefined for an unknown one, or a name that is not a loop ID (a stray file). */
  get(id: string): LoopState | undefined {
    try {
      return this.loops.get(id);
    } catch (err) {
      if (err instanceof UsageError) return undefined;
      throw err;
    }
  }

  /** A loop file changed on disk (the CLI runs one). */
  changedOnDisk(id: string): void {
    const loop = this.get(id);
    if (loop) this.changed.fire({ loop });
  }

  /** A step of a loop run by something else here (the demo). */
  report(change: LoopChange): void {
    this.changed.fire(change);
  }

  /** Runs a review loop here, reporting every step; resolves when it ends. */
  async run(request: Omit<LoopRequest, 'baseDir'> & { baseDir?: string }, onProgress?: (message: string) => void): Promise<LoopState> {
    this.jobs.trust.require('run a review loop');
    // Paths in the request are the workspace's unless the caller says from where.
    const baseDir = request.baseDir ?? this.jobs.deps.controlPlane.workspace;
    return this.follow((runner) => runner.start({ ...request, baseDir }), onProgress);
  }

  /**
   * Checks and stores a new loop, then runs it in a process of its own (`mam loop resume ID`, its
   * output in `.mam/loops/<id>.log`) so that it outlives its caller (an MCP client's call); resolves
   * once it is stored. The same task's unfinished loop on the checkout goes on instead.
   */
  async start(request: Omit<LoopRequest, 'baseDir'> & { baseDir?: string }): Promise<LoopState> {
    this.jobs.trust.require('run a review loop');
    const runner = new LoopRunner(this.jobs, this.logger);
    try {
      const state = await runner.prepare({ ...request, baseDir: request.baseDir ?? this.jobs.deps.controlPlane.workspace });
      this.changed.fire({ loop: state });
      this.runDetached(state.id);
      return state;
    } finally {
      runner.dispose();
    }
  }

  /** Where a loop run by `start` writes its output. */
  runLog(id: string): string {
    return path.join(this.jobs.deps.controlPlane.paths.loopsDir, `${id}.log`);
  }

  private runDetached(id: string): void {
    const { controlPlane, env, cliPath } = this.jobs.deps;
    const log = fs.openSync(this.runLog(id), 'a');
    try {
      const child = spawn(process.execPath, [cliPath, 'loop', 'resume', id, '--workspace', controlPlane.workspace], { cwd: controlPlane.workspace, env, detached: true, stdio: ['ignore', log, log] });
      child.on('error', (err) => this.logger.warn(`loop ${id}: could not start its runner: ${err.message}`));
      child.unref();
    } finally {
      fs.closeSync(log);
    }
  }

  /** Continues here a loop whose run stopped midway (its process died), without repeating finished jobs. */
  async resume(id: string, onProgress?: (message: string) => void): Promise<LoopState> {
    this.jobs.trust.require('resume a review loop');
    return this.follow((runner) => runner.resume(id), onProgress);
  }

  /** Cancels a running loop and its open jobs, wherever it runs (loopCancel.ts). */
  async cancel(id: string): Promise<{ loop: LoopState; changed: boolean }> {
    this.jobs.trust.require('cancel a review loop');
    return cancelLoop(this.jobs, this.loops, id);
  }

  private async follow(run: (runner: LoopRunner) => Promise<LoopState>, onProgress?: (message: string) => void): Promise<LoopState> {
    await this.prepare();
    const runner = new LoopRunner(this.jobs, this.logger);
    const sub = runner.onDidProgress(({ loop, message }) => {
      this.changed.fire({ loop, message });
      onProgress?.(message);
    });
    try {
      return await run(runner);
    } finally {
      sub.dispose();
      runner.dispose();
    }
  }
}
