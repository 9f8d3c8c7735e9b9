/**
 * The runner's side of its presence (presence.ts), on its own MQTT connection: the will it connects
 * with, `online` once it listens and after every reconnect, and on a stop on purpose `stopped`
 * followed by a clean DISCONNECT, which makes the broker discard the will. Every step is bounded:
 * with the broker away a QoS 1 publish waits for its return, and then the will speaks for it.
 */
import type { MqttClient } from 'mqtt';
import { unrefTimer, type Clock } from '../base/clock';
import { errorMessage } from '../base/errors';
import type { Logger } from '../base/log';
import type { ConnectClientOptions } from '../messaging/mqttClient';
import { RunnerPresence } from './presence';

/** How long saying its presence (and a clean goodbye) may take before the runner gives up on it. */
const BOUND_MS = 5_000;

export class PresenceSpeaker {
  private readonly presence: RunnerPresence;
  private client: MqttClient | undefined;
  private leaving = false;

  constructor(
    runner: string,
    secret: string,
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {
    this.presence = new RunnerPresence(runner, secret, clock);
  }

  /** The will to connect with: should the connection end without a goodbye, the broker says for it that it is gone. */
  get will(): NonNullable<ConnectClientOptions['will']> {
    return { topic: this.presence.topic, payload: this.presence.message('offline'), qos: 1, retain: true };
  }

  /** Says `online` now, and again after every reconnect (a will the broker published for the connection it replaced would otherwise be the last word). */
  async attach(client: MqttClient): Promise<void> {
    this.client = client;
    client.on('connect', () => void (this.leaving ? undefined : this.say('online')));
    await this.say('online');
  }

  /** Says `stopped` and disconnects cleanly, or, with the broker away, just lets go. */
  async leave(): Promise<void> {
    this.leaving = true;
    const client = this.client;
    if (!client) return;
    await this.say('stopped');
    const ended = client.endAsync(false).then(() => true, () => true);
    if ((await Promise.race([ended, this.bound()])) !== true) await client.endAsync(true).catch(() => undefined);
  }

  private async say(state: 'online' | 'stopped'): Promise<void> {
    const client = this.client;
    if (!client?.connected) return;
    const runner = this.presence.runner;
    const said = client.publishAsync(this.presence.topic, this.presence.message(state), { qos: 1, retain: true }).then(
      () => true,
      (err: unknown) => void this.logger.warn(`runner ${runner}: could not say it is ${state}: ${errorMessage(err)}`),
    );
    if ((await Promise.race([said, this.bound()])) !== true) this.logger.warn(`runner ${runner}: the broker did not take its word that it is ${state}`);
  }

  /** Resolves after the bound, without holding the process open. */
  private bound(): Promise<void> {
    return new Promise((resolve) => unrefTimer(this.clock.setTimeout(resolve, BOUND_MS)));
  }
}
