/**
 * Watches one topic of job events until the event named arrives, for a test whose MQTT client must
 * run on a host in a network namespace (test/faults/partition.test.ts: that the runner has relayed
 * the agent's last word while the submitter is cut off).
 *
 *   node -r esbuild-register test/support/watchEvent.ts SPEC_JSON
 *
 * SPEC_JSON: { endpoint: BrokerEndpoint, topic: string, event: string, timeoutMs: number }. Prints
 * `subscribed` once its subscription is in place, then `heard EVENT seq N` and exits 0 when a live
 * message on the topic holds that event; exits 1 if none arrives within timeoutMs.
 */
import type { BrokerEndpoint } from '../../src/core/messaging/brokerRecord';
import { connectClient, uniqueClientId } from '../../src/core/messaging/mqttClient';

interface Spec {
  endpoint: BrokerEndpoint;
  topic: string;
  event: string;
  timeoutMs: number;
}

async function main(): Promise<void> {
  const spec = JSON.parse(process.argv[2] ?? '') as Spec;
  const client = await connectClient(spec.endpoint, { clientId: uniqueClientId('test-watch-event') });
  const heard = new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no ${spec.event} on ${spec.topic} within ${spec.timeoutMs} ms`)), spec.timeoutMs);
    client.on('message', (_topic, bytes, packet) => {
      if (packet.retain) return;
      let payload: { event?: unknown; seq?: unknown };
      try {
        payload = JSON.parse(bytes.toString()) as { event?: unknown; seq?: unknown };
      } catch {
        return;
      }
      if (payload.event !== spec.event) return;
      clearTimeout(timer);
      resolve(Number(payload.seq));
    });
  });
  await client.subscribeAsync(spec.topic, { qos: 1 });
  process.stdout.write('subscribed\n');
  const seq = await heard;
  process.stdout.write(`heard ${spec.event} seq ${seq}\n`);
  await client.endAsync();
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`watchEvent: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
