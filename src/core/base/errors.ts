/**
 * Exit statuses of the `mam` CLI (SPEC §5). Every error the core throws on purpose is a MamError
 * carrying one of these, so the CLI maps errors to exits in one place.
 */
export const ExitCode = {
  ok: 0,
  /** The job failed, or no `started` arrived within T. */
  failed: 1,
  /** deadline_timeout or wall_clock_timeout. */
  timeout: 2,
  /** The broker is unusable and no terminal state is on disk. */
  brokerUnusable: 3,
  /** The agent shows a screen only a person can answer (a first-run dialog, a warning); the session is kept. */
  needsAttention: 4,
  /** The prompt was not delivered (busy, target not found, record claimed by another attempt). */
  notDelivered: 5,
  /** `session create --onboard`: the onboarding job failed. */
  onboardFailed: 44,
  /** `session create --onboard`: the onboarding job did not finish in time. */
  onboardTimeout: 45,
  /** Bad flags or input. */
  usage: 64,
  /** An internal error: a bug, or the machine refused something we could not anticipate. */
  internal: 70,
  /** `job wait --timeout`: the wait ran out while the jobs are still open (sysexits' EX_TEMPFAIL: wait again). */
  stillOpen: 75,
} as const;

export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/** A recorded exit status as an ExitCode, or `otherwise` when it is none of them (or none was recorded). */
export function exitCodeOf(code: number | null | undefined, otherwise: ExitCode): ExitCode {
  return Object.values(ExitCode).find((c) => c === code) ?? otherwise;
}

/**
 * What every MamError carries, whichever copy of this module made it: a `mam event` process loads
 * two bundles (dist/cli-event.js, then dist/cli-event-publish.js when the relay does not take its
 * event), each with its own copy of these classes, and `instanceof` sees only its own.
 */
const MAM_ERROR = Symbol.for('multi-agent-mux.MamError');

/** An error a user can act on. `message` is one line; `code` is a stable machine-readable name. */
export class MamError extends Error {
  readonly [MAM_ERROR] = true;

  constructor(
    message: string,
    readonly code: string,
    readonly exitCode: ExitCode,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/** `err instanceof MamError`, also for one made by another bundle's copy of the class (above). */
export function isMamError(err: unknown): err is MamError {
  return err instanceof MamError || (err instanceof Error && MAM_ERROR in err);
}

/** Bad flags, bad names, bad values: nothing was changed. Exit 64. */
export class UsageError extends MamError {
  constructor(message: string, code = 'usage') {
    super(message, code, ExitCode.usage);
  }
}

/** A configuration file or setting is malformed. Exit 64. */
export class ConfigError extends MamError {
  constructor(message: string) {
    super(message, 'config', ExitCode.usage);
  }
}

/** The control plane on disk cannot be read and cannot be repaired automatically. Exit 64. */
export class CorruptStoreError extends MamError {
  constructor(message: string) {
    super(message, 'corrupt_store', ExitCode.usage);
  }
}

/** A lock could not be taken within its bound. */
export class LockTimeoutError extends MamError {
  constructor(message: string) {
    super(message, 'lock_timeout', ExitCode.internal);
  }
}

/** A record failed schema validation. The message names the record and the field. */
export class ValidationError extends MamError {
  constructor(message: string) {
    super(message, 'invalid', ExitCode.usage);
  }
}

export function errorMessage(err: unknown): string {
  if (err instanceof Error) return err.message;
  return String(err);
}

export function isErrnoException(err: unknown, code?: string): err is NodeJS.ErrnoException {
  return err instanceof Error && 'code' in err && (code === undefined || err.code === code);
}

/** The `code` an error carries (Node's 'ENOENT', MQTT's reason numbers …), whatever threw it. */
export function errorCode(err: unknown): unknown {
  return typeof err === 'object' && err !== null && 'code' in err ? err.code : undefined;
}
