import * as fs from 'node:fs';
import * as path from 'node:path';
import { spawn } from 'node:child_process';
import type { BrokerEndpoint } from '../../src/core/messaging/brokerRecord';
import { CLI, watchChild, type WatchedProcess } from './helpers';
import type { JobFixture } from './jobs';
import { startMosquitto, type MosquittoBroker } from './mosquitto';

/** A `mam remote run` child process, its output collected as it comes. */
export type RunnerProcess = WatchedProcess;

export function startRunner(fixture: JobFixture, args: string[], env: Record<string, string>): RunnerProcess {
  const child = spawn(process.execPath, [CLI, 'remote', 'run', ...args], { cwd: fixture.workspace, env: { ...fixture.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  return watchChild(child, 'the runner');
}

export type SharedBrokerKind = 'embedded' | 'mosquitto';

export interface SharedBroker {
  endpoint: BrokerEndpoint;
  stop(): Promise<void>;
}

/**
 * One broker for two workspaces, as two hosts would share it: the submitter's embedded broker
 * (the runner's `.mam.env` names it with the credentials from the submitter's broker.json), or a
 * Mosquitto that both `.mam.env` files name.
 */
export async function shareBroker(kind: SharedBrokerKind, submitter: JobFixture, runner: JobFixture): Promise<SharedBroker> {
  if (kind === 'embedded') {
    const r = await submitter.run(['broker', 'start']);
    if (r.exitCode !== 0) throw new Error(`broker start failed: ${r.stderr}`);
    const record = JSON.parse(fs.readFileSync(path.join(submitter.workspace, '.mam', 'broker.json'), 'utf8')) as { port: number; username: string; password: string };
    const endpoint: BrokerEndpoint = { host: '127.0.0.1', port: record.port, tls: false, username: record.username, password: record.password, embedded: false };
    writeEnvFile(runner.workspace, endpoint);
    return { endpoint, stop: async () => undefined }; // the fixture stops the embedded broker
  }
  const mosquitto: MosquittoBroker = await startMosquitto();
  writeEnvFile(submitter.workspace, mosquitto.endpoint);
  writeEnvFile(runner.workspace, mosquitto.endpoint);
  return { endpoint: mosquitto.endpoint, stop: () => mosquitto.stop() };
}

function writeEnvFile(workspace: string, e: BrokerEndpoint): void {
  const lines = [`MQTT_BROKER=${e.host}`, `MQTT_PORT=${e.port}`, ...(e.username ? [`MQTT_USERNAME=${e.username}`] : []), ...(e.password ? [`MQTT_PASSWORD=${e.password}`] : [])];
  fs.writeFileSync(path.join(workspace, '.mam.env'), `${lines.join('\n')}\n`, { mode: 0o600 });
}

/** The topics the submitter's embedded broker keeps retained (its on-disk mirror, written within ~100 ms). */
export function retainedTopics(workspace: string): string[] {
  try {
    const data = JSON.parse(fs.readFileSync(path.join(workspace, '.mam', 'broker-retained.json'), 'utf8')) as { retained: Array<{ topic: string }> };
    return data.retained.map((m) => m.topic);
  } catch {
    return [];
  }
}
