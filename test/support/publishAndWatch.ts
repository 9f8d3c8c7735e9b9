/**
 * Publishes messages as one broker user while another user's subscription watches: what reached
 * the watcher (live messages only) is printed as JSON. For a test that must run its MQTT clients on
 * a host in a network namespace (test/faults/manyHosts.test.ts: what a runner host's user may
 * write under the broker's ACL).
 *
 *   node -r esbuild-register test/support/publishAndWatch.ts SPEC_JSON
 *
 * SPEC_JSON: { watcher: BrokerEndpoint, filters: string[], publisher: BrokerEndpoint,
 * messages: [{ topic, payload }], until: TOPIC }. The last message should go to `until`, a topic the
 * publisher may write and the watcher hears: once it arrives, everything published before it has
 * been through the broker (one client's messages keep their order), and the script prints
 * `[{ topic, payload }]` heard and exits 0; 1 if it never arrives within 10 s.
 */
import type { BrokerEndpoint } from '../../src/core/messaging/brokerRecord';
import { connectClient, uniqueClientId } from '../../src/core/messaging/mqttClient';

interface Spec {
  watcher: BrokerEndpoint;
  filters: string[];
  publisher: BrokerEndpoint;
  messages: Array<{ topic: string; payload: string }>;
  until: string;
}

async function main(): Promise<void> {
  const spec = JSON.parse(process.argv[2] ?? '') as Spec;
  const watcher = await connectClient(spec.watcher, { clientId: uniqueClientId('test-watcher') });
  const heard: Array<{ topic: string; payload: string }> = [];
  const arrived = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`nothing arrived on ${spec.until} within 10 s`)), 10_000);
    watcher.on('message', (topic, bytes, packet) => {
      if (packet.retain) return;
      heard.push({ topic, payload: bytes.toString() });
      if (topic === spec.until) {
        clearTimeout(timer);
        resolve();
      }
    });
  });
  await watcher.subscribeAsync(spec.filters, { qos: 1 });
  const publisher = await connectClient(spec.publisher, { clientId: uniqueClientId('test-publisher') });
  for (const m of spec.messages) await publisher.publishAsync(m.topic, m.payload, { qos: 1 });
  await arrived;
  await publisher.endAsync();
  await watcher.endAsync();
  process.stdout.write(`${JSON.stringify(heard)}\n`);
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`publishAndWatch: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
