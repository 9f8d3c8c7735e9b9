/** A workspace's stores, sessions and jobs engine, wired the way the CLI does, for the benchmarks. */
import { MemoryLogger } from '../src/core/base/log';
import { resolveConfig } from '../src/core/config/settings';
import { ControlPlane } from '../src/core/store/controlPlane';
import { JobEngine } from '../src/core/jobs/jobEngine';
import { jobTargets } from '../src/core/jobs/jobTarget';
import { remoteTarget } from '../src/core/remote/remoteTarget';
import { realMuxFactory } from '../src/core/mux';
import { SessionService } from '../src/core/sessions/sessionService';

export function benchEngine(ws: string, env: NodeJS.ProcessEnv, cli: string): { controlPlane: ControlPlane; sessions: SessionService; engine: JobEngine } {
  const logger = new MemoryLogger();
  const controlPlane = new ControlPlane(ws, { logger });
  const config = resolveConfig({ workspace: ws, env });
  const sessions = new SessionService({ controlPlane, config, logger, env, muxFactory: realMuxFactory(env) });
  const engine = new JobEngine({ controlPlane, config, sessions, muxFactory: realMuxFactory(env), logger, env, cliPath: cli, targets: jobTargets(remoteTarget) });
  return { controlPlane, sessions, engine };
}
