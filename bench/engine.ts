/** A workspace's stores, sessions and jobs engine, wired by the core's composition root, for the benchmarks. */
import { MemoryLogger } from '../src/core/base/log';
import { buildCore } from '../src/core/core';
import type { ControlPlane } from '../src/core/store/controlPlane';
import type { JobEngine } from '../src/core/jobs/jobEngine';
import type { SessionService } from '../src/core/sessions/sessionService';

export function benchEngine(ws: string, env: NodeJS.ProcessEnv, cli: string): { controlPlane: ControlPlane; sessions: SessionService; engine: JobEngine } {
  const core = buildCore(ws, { env, logger: new MemoryLogger(), cliPath: cli });
  return { controlPlane: core.controlPlane, sessions: core.sessions, engine: core.jobs };
}
