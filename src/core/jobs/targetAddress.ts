import { UsageError } from '../base/errors';
import { nameProblem, printable } from '../base/ids';
import type { JobRecord } from '../store/jobSchema';

/** The kinds of place a job can go: a session on this host, a remote runner, a person. */
export type TargetKind = NonNullable<JobRecord['target']>['kind'];

/** Where a job goes, as `--session` named it (`parseTarget` below). */
export interface TargetAddress {
  kind: TargetKind;
  /** local: the multiplexer the session must run under, if the user named one. */
  mux?: 'tmux' | 'herdr';
  /** The session (local), runner (remote) or person (human). */
  name: string;
  /** remote: a session on the runner's host. */
  session?: string;
}

/**
 * Parses the `--session` target of `mam job submit`: `NAME`, `tmux:NAME`, `herdr:NAME`,
 * `remote:RUNNER`, `remote:RUNNER/SESSION` (a session on the runner's host; a runner started with
 * its own `--session` uses that one whatever the dispatch says), or `human:NAME` (a person).
 */
export function parseTarget(target: string): TargetAddress {
  const m = /^(?:(tmux|herdr|remote|human):)?(.*)$/s.exec(target)!;
  const [name, session, ...extra] = m[1] === 'remote' ? m[2]!.split('/') : [m[2]!];
  const check = (value: string, what: string): void => {
    const problem = nameProblem(value, what);
    if (problem) throw new UsageError(`--session ${printable(target, 60)}: ${problem}`);
  };
  check(name!, m[1] === 'remote' ? 'runner name' : m[1] === 'human' ? "person's name" : 'session name');
  if (m[1] === 'human') return { kind: 'human', name: name! };
  const mux = m[1];
  if (mux !== 'remote') return { kind: 'local', ...(mux === 'tmux' || mux === 'herdr' ? { mux } : {}), name: name! };
  if (extra.length > 0) throw new UsageError(`--session ${printable(target, 60)}: use remote:RUNNER or remote:RUNNER/SESSION`);
  if (session !== undefined) check(session, 'session name');
  return { kind: 'remote', name: name!, ...(session !== undefined ? { session } : {}) };
}
