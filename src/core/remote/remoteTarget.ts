import type { JobTarget } from '../jobs/jobTarget';
import { cancelRemote, checkRemoteSubmit, clearDispatch, dispatchRemote } from './dispatch';

/**
 * A remote runner (`remote:RUNNER`, `remote:RUNNER/SESSION`): the job travels as a signed,
 * retained dispatch on the shared broker, and the runner relays its events back (dispatch.ts).
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
};
