import type { JobTarget } from '../jobs/jobTarget';
import { cancelRemote, checkRemoteSubmit, clearDispatch, dispatchRemote } from './dispatch';
import { MIN_SECRET_CHARS } from './dispatchMessage';
import { PresenceWatch } from './presenceWatch';

/**
 * A remote runner (`remote:RUNNER`, `remote:RUNNER/SESSION`): the job travels as a signed,
 * retained dispatch on the shared broker, and the runner relays its events back (dispatch.ts); a
 * runner that vanishes from the broker fails its open jobs at once (presenceWatch.ts).
 */
export const remoteTarget: JobTarget = {
  kind: 'remote',
  check: (engine, { task, appendix }) => checkRemoteSubmit(engine.deps.config, task, appendix),
  deliver: (engine, { job, address, task, appendix, token, ownerToken }) =>
    dispatchRemote(engine, { job, runner: address.name, task, token, ownerToken, ...(address.session ? { session: address.session } : {}), ...(appendix ? { appendix } : {}) }),
  cancel: async (engine, job) => {
    if (job.target) await cancelRemote(engine, job.target.name, job.id);
  },
  afterEnd: async (engine, job) => {
    if (job.target) await clearDispatch(engine, job.target.name, job.id);
  },
  // Without a usable secret no remote job can be sent from here, nor a runner's word be checked.
  watch: (engine, bus) => {
    const secret = engine.deps.config.values.dispatchSecret;
    return secret.length >= MIN_SECRET_CHARS ? new PresenceWatch(engine, bus, secret) : undefined;
  },
};
