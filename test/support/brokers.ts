/**
 * The two brokers every job and fault suite runs against — the embedded one (aedes, its daemon
 * started on demand) and a real Mosquitto — each with how to kill and restart it mid-job.
 */
import { MemoryLogger } from '../../src/core/base/log';
import { readBrokerRecord } from '../../src/core/messaging/brokerRecord';
import { startEmbeddedBroker } from '../../src/core/messaging/embeddedBroker';
import { isAlive } from '../../src/core/base/process';
import { CLI, until } from './helpers';
import type { JobFixture } from './jobs';
import { mosquittoMissing, startMosquitto, type MosquittoOptions } from './mosquitto';
import { itNeeds } from './needs';

/** A broker for one test: its settings, and how to kill and restart it mid-job. */
export interface BrokerUnderTest {
  env: Record<string, string>;
  kill(f: JobFixture): Promise<void>;
  restart(f: JobFixture): Promise<void>;
  dispose(): Promise<void>;
}

export const embedded = async (): Promise<BrokerUnderTest> => ({
  env: {},
  async kill(f) {
    const pid = readBrokerRecord(f.controlPlane.paths)!.pid!;
    process.kill(pid, 'SIGKILL');
    await until(() => !isAlive(pid), 10_000, 'the broker to die');
  },
  async restart(f) {
    await startEmbeddedBroker(f.controlPlane.paths, new MemoryLogger(), { cliPath: CLI, env: f.env });
  },
  async dispose() {},
});

export const mosquitto = (options: MosquittoOptions = {}) => async (): Promise<BrokerUnderTest> => {
  const broker = await startMosquitto(options);
  const e = broker.endpoint;
  return {
    env: { MQTT_BROKER: e.host, MQTT_PORT: String(e.port), ...(e.username ? { MQTT_USERNAME: e.username, MQTT_PASSWORD: e.password ?? '' } : {}) },
    kill: () => broker.stop(),
    restart: () => broker.start(),
    dispose: () => broker.stop(),
  };
};

/**
 * Defines `suite` once per broker: on the embedded one, and on Mosquitto (a pending test saying
 * why where Mosquitto is not installed; `.ci/run` installs it, so on CI both run).
 */
export function forEachBroker(title: string, suite: (brokerName: string, makeBroker: () => Promise<BrokerUnderTest>) => void, options: { mosquitto?: MosquittoOptions } = {}): void {
  suite('embedded broker', embedded);
  const missing = mosquittoMissing();
  if (missing) describe(`${title} (Mosquitto)`, () => itNeeds(missing, `every ${title} test again on Mosquitto`, async () => undefined));
  else suite('Mosquitto', mosquitto(options.mosquitto));
}
