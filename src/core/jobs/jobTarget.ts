import type { JobRecord } from '../store/jobSchema';
import type { Disposable } from '../base/disposable';
import type { JobBus } from './jobBus';
import type { JobEngine } from './jobEngine';
import type { TargetAddress, TargetKind } from './targetAddress';

/** What a target needs to hand a registered job over. */
export interface Handover {
  /** The registered job (state `registered`, owned by this attempt; its brief is written). */
  job: JobRecord;
  address: TargetAddress;
  task: string;
  appendix?: string;
  /** The job's token: a target that runs the job elsewhere passes it on with the job. */
  token: string;
  /** This attempt's owner token: the hand-over happens only while the record still carries it. */
  ownerToken: string;
}

export interface Delivery {
  job: JobRecord;
  /** The job is delivered (typed, published, assigned): T and the budget count from now. */
  delivered: boolean;
  /** Another attempt took the job's record before this one delivered it (exit 5). */
  claimedElsewhere: boolean;
}

/**
 * One kind of place a job can go. The submit is the same for every kind — check, register, write
 * the brief, deliver, wait, clean up — and each step that depends on where the job goes is here.
 */
export interface JobTarget {
  readonly kind: TargetKind;
  /** Before anything is written: throws a UsageError (exit 64) when the job cannot go there. */
  check(engine: JobEngine, request: { task: string; appendix?: string }): void;
  /** Marks the job `dispatched` and hands it over, exactly once. */
  deliver(engine: JobEngine, handover: Handover): Promise<Delivery>;
  /** The job was just cancelled here: tell whoever runs it. Never throws. */
  cancel(engine: JobEngine, job: JobRecord): Promise<void>;
  /** The submitter has seen the job end: take back what the hand-over left behind. Never throws. */
  afterEnd(engine: JobEngine, job: JobRecord): Promise<void>;
  /**
   * What the judges of these jobs hear besides their timers (a remote runner's presence), on the
   * engine's connection: started once an engine both is connected and supervises jobs.
   */
  watch?(engine: JobEngine, bus: JobBus): Disposable | undefined;
}

/** The targets a jobs engine can send to, one per kind; registered by the composition root (core.ts). */
export class JobTargets {
  private readonly byKind = new Map<TargetKind, JobTarget>();

  constructor(targets: readonly JobTarget[]) {
    for (const target of targets) this.byKind.set(target.kind, target);
  }

  all(): JobTarget[] {
    return [...this.byKind.values()];
  }

  /** The target for a kind; an engine built without it cannot send there. */
  of(kind: TargetKind): JobTarget {
    const target = this.byKind.get(kind);
    if (!target) throw new Error(`this jobs engine was built without a target for ${kind} jobs`);
    return target;
  }
}
