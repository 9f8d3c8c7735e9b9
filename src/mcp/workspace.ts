import * as fs from 'node:fs';
import * as path from 'node:path';
import { UsageError } from '../core/base/errors';
import type { Logger } from '../core/base/log';
import { trustOf } from '../core/base/trust';
import { buildCore, type Core } from '../core/core';
import { registerOrchestrator } from '../core/init/initWorkspace';
import { readBrokerRecord } from '../core/messaging/brokerRecord';
import { findEnclosingAgent } from '../core/sessions/enclosingAgent';
import type { Tool } from './tool';

export interface McpWorkspaceOptions {
  /** The workspace the usual lookup found (`--workspace`, MAM_WORKSPACE, the nearest `.mam/` or git root), or why it found none. */
  workspace: { root: string } | { problem: string };
  env: NodeJS.ProcessEnv;
  /** The bundled CLI (dist/cli.js) agents are told to run. */
  cliPath: string;
  /** `mam mcp --untrusted` (a client serving an untrusted folder): reading only; nothing acts. */
  trusted: boolean;
  logger: Logger;
}

/**
 * The one workspace a `mam mcp` process serves, and the gate every call passes first. Looked at
 * on each call, since `mam init` may make the control plane while the server runs: no workspace,
 * or one without `.mam/`, refuses with one line and nothing is done; an untrusted one refuses every
 * tool that acts. The first call in a trusted one records the client, if it is an agent CLI's
 * conversation, as the orchestrator's (as `mam init` does from an agent's shell).
 */
export class McpWorkspace {
  private core: Core | undefined;
  private orchestratorLooked = false;

  constructor(private readonly options: McpWorkspaceOptions) {}

  describe(): string {
    const ws = this.options.workspace;
    return 'root' in ws ? `${ws.root}${this.options.trusted ? '' : ' (untrusted: reading only)'}` : `no workspace (${ws.problem})`;
  }

  /** The core, once the call may go ahead (`tool` null: a resource read); else a UsageError saying why not. */
  async coreFor(tool: Tool | null): Promise<Core> {
    const ws = this.options.workspace;
    if (!('root' in ws)) throw new UsageError(`${ws.problem}; nothing was done`, 'no_workspace');
    if (!isDir(path.join(ws.root, '.mam'))) {
      throw new UsageError(`${ws.root} is not a MAM workspace yet (it has no .mam/): run 'mam init' there first; nothing was done`, 'uninitialised');
    }
    const core = (this.core ??= buildCore(ws.root, { env: this.options.env, logger: this.options.logger, cliPath: this.options.cliPath, trust: trustOf(this.options.trusted) }));
    if (tool?.acts) core.trust.require(`run ${tool.name}`);
    if (tool && core.trust.trusted && !this.orchestratorLooked) {
      this.orchestratorLooked = true;
      await this.recordOrchestrator(core);
    }
    return core;
  }

  /** What no answer may hold: the broker's passwords and the dispatch secret of this workspace. */
  secrets(): string[] {
    const core = this.core;
    if (!core) return [];
    const out: string[] = [];
    try {
      const v = core.config.values;
      out.push(v.brokerPassword, v.dispatchSecret);
    } catch {
      // a malformed .mam.env: the call that resolves it says so
    }
    try {
      const record = readBrokerRecord(core.controlPlane.paths);
      if (record) out.push(record.password);
    } catch {
      // a corrupt broker.json holds no password we could leak
    }
    const endpoint = core.jobsBuilt ? core.jobs.endpoint : undefined;
    if (endpoint?.password) out.push(endpoint.password);
    // Short values would redact ordinary words; MAM's own secrets are long.
    return [...new Set(out.filter((s) => s.length >= 8))];
  }

  dispose(): void {
    this.core?.dispose();
  }

  private async recordOrchestrator(core: Core): Promise<void> {
    try {
      const outcome = await registerOrchestrator(core.controlPlane.paths, findEnclosingAgent(process.pid, this.options.env));
      this.options.logger.info(outcome.registered ? `orchestrator: ${outcome.agent} conversation ${outcome.conversation_id} (${outcome.how})` : `no orchestrator recorded: ${outcome.why}`);
    } catch (err) {
      this.options.logger.warn(`could not record the orchestrator: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
}

function isDir(p: string): boolean {
  try {
    return fs.statSync(p).isDirectory();
  } catch {
    return false;
  }
}
