import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { execa } from 'execa';
import { ConfigError } from '../../src/core/base/errors';
import { MemoryLogger } from '../../src/core/base/log';
import { resolveConfig } from '../../src/core/config/settings';
import { externalBroker, readEmbeddedEndpoint, resolveBroker } from '../../src/core/messaging/brokerEndpoint';
import { newBrokerRecord, writeBrokerRecord } from '../../src/core/messaging/brokerRecord';
import { ControlPlanePaths } from '../../src/core/store/paths';
import { REPO_ROOT, tempDir } from '../support/helpers';

describe('broker settings', () => {
  let ws: string;
  beforeEach(() => {
    ws = tempDir('broker-cfg');
  });
  const external = (env: Record<string, string>, logger = new MemoryLogger()) => externalBroker(resolveConfig({ workspace: ws, env }), logger);

  it('is the embedded broker when MQTT_BROKER is unset', () => {
    assert.equal(external({}), undefined);
  });

  it('takes a host name or address, with MQTT_PORT or the default port', () => {
    assert.deepEqual(external({ MQTT_BROKER: 'mqtt.internal' }), { host: 'mqtt.internal', port: 1883, tls: false, embedded: false });
    assert.deepEqual(external({ MQTT_BROKER: '10.0.0.5', MQTT_PORT: '1884', MQTT_USERNAME: 'u', MQTT_PASSWORD: 'p' }), {
      host: '10.0.0.5',
      port: 1884,
      tls: false,
      username: 'u',
      password: 'p',
      embedded: false,
    });
    assert.equal(external({ MQTT_BROKER: 'mqtt.internal', MQTT_TLS: 'true' })?.port, 8883);
  });

  it('takes mqtt:// and mqtts:// URLs, IPv6 included', () => {
    assert.deepEqual(external({ MQTT_BROKER: 'mqtt://broker.example:2883' }), { host: 'broker.example', port: 2883, tls: false, embedded: false });
    assert.deepEqual(external({ MQTT_BROKER: 'mqtts://broker.example' }), { host: 'broker.example', port: 8883, tls: true, embedded: false });
    assert.deepEqual(external({ MQTT_BROKER: 'mqtts://[::1]:9883/' }), { host: '::1', port: 9883, tls: true, embedded: false });
    assert.equal(external({ MQTT_BROKER: 'mqtt://broker.example', MQTT_PORT: '1999' })?.port, 1999);
  });

  it('keeps MQTT_CA (a readable file) for TLS, and ignores it with a warning without TLS', () => {
    const ca = path.join(ws, 'ca.pem');
    fs.writeFileSync(ca, 'not checked here');
    assert.equal(external({ MQTT_BROKER: 'mqtts://b.example', MQTT_CA: ca })?.ca, ca);
    const logger = new MemoryLogger();
    assert.equal(external({ MQTT_BROKER: 'b.example', MQTT_CA: ca }, logger)?.ca, undefined);
    assert.match(logger.messages('warn')[0]!, /MQTT_CA is set but the broker is not used over TLS/);
  });

  it('refuses contradictions and malformed values with one line naming the variable', () => {
    const cases: Array<[Record<string, string>, RegExp]> = [
      [{ MQTT_BROKER: 'ws://b.example' }, /MQTT_BROKER 'ws:\/\/b\.example': only mqtt:\/\/ and mqtts:\/\/ are supported/],
      [{ MQTT_BROKER: 'mqtt://u:p@b.example' }, /must not hold credentials; set MQTT_USERNAME and MQTT_PASSWORD instead/],
      [{ MQTT_BROKER: 'mqtt://b.example/path' }, /has a path or query/],
      [{ MQTT_BROKER: 'mqtt://b.example', MQTT_TLS: 'true' }, /MQTT_BROKER says mqtt:\/\/ but MQTT_TLS is true/],
      [{ MQTT_BROKER: 'mqtt://b.example:1884', MQTT_PORT: '1885' }, /names port 1884 but MQTT_PORT is 1885/],
      [{ MQTT_BROKER: 'b.example; rm -rf /' }, /is not a host name/],
      [{ MQTT_BROKER: 'b.example', MQTT_PASSWORD: 'p' }, /MQTT_PASSWORD is set without MQTT_USERNAME/],
      [{ MQTT_BROKER: 'mqtts://b.example', MQTT_CA: '/nonexistent/ca.pem' }, /MQTT_CA names \/nonexistent\/ca\.pem, which cannot be read/],
    ];
    for (const [env, message] of cases) {
      assert.throws(() => external(env), (err: unknown) => err instanceof ConfigError && err.exitCode === 64 && message.test(err.message) && !err.message.includes('\n'), JSON.stringify(env));
    }
  });

  it('resolveBroker returns an external broker as configured, touching nothing on disk', async () => {
    const config = resolveConfig({ workspace: ws, env: { MQTT_BROKER: 'mqtt://b.example:1884' } });
    const endpoint = await resolveBroker({ workspace: ws, config, env: {}, start: true, logger: new MemoryLogger() });
    assert.deepEqual(endpoint, { host: 'b.example', port: 1884, tls: false, embedded: false });
    assert.equal(fs.existsSync(path.join(ws, '.mam')), false);
  });

  it('readEmbeddedEndpoint is undefined without broker.json, when stopped, or when the pid is not the daemon', () => {
    const paths = new ControlPlanePaths(ws);
    assert.equal(readEmbeddedEndpoint(paths), undefined);
    const record = { ...newBrokerRecord(), port: 41883 };
    writeBrokerRecord(paths, record);
    assert.equal(readEmbeddedEndpoint(paths), undefined);
    writeBrokerRecord(paths, { ...record, pid: process.pid, started_at: new Date().toISOString() });
    assert.equal(readEmbeddedEndpoint(paths), undefined, 'this process is alive but is not a broker daemon');
    fs.writeFileSync(paths.brokerFile, '{not json');
    assert.equal(readEmbeddedEndpoint(paths), undefined);
  });

  it('the lean path (brokerEndpoint.ts) loads neither mqtt, aedes, sql.js nor yaml', async () => {
    const script = [
      "require('./src/core/messaging/brokerEndpoint');",
      "const heavy = Object.keys(require.cache).filter((f) => /node_modules[\\\\/](mqtt|mqtt-packet|aedes|aedes-[a-z]+|sql\\.js|yaml)[\\\\/]/.test(f));",
      'process.stdout.write(JSON.stringify(heavy));',
    ].join('\n');
    const r = await execa(process.execPath, ['-r', 'esbuild-register', '-e', script], { cwd: REPO_ROOT, reject: false });
    assert.equal(r.exitCode, 0, String(r.stderr));
    assert.deepEqual(JSON.parse(String(r.stdout)), []);
  });
});
