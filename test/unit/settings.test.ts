import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { idleTimeoutS, resolveConfig, sourceOf } from '../../src/core/config/settings';
import { ConfigError } from '../../src/core/base/errors';
import { tempDir } from '../support/helpers';

describe('settings resolution', () => {
  let ws: string;
  beforeEach(() => {
    ws = tempDir('cfg');
  });

  it('uses the defaults of SPEC §5 when nothing is set', () => {
    const { values, sources } = resolveConfig({ workspace: ws, env: {} });
    assert.equal(values.startTimeoutS, 180);
    assert.equal(idleTimeoutS(values), 120);
    assert.equal(values.jobTimeoutS, 3600);
    assert.equal(values.brokerHost, '');
    assert.equal(sources.startTimeoutS, 'default');
  });

  it('ranks flag > environment > VS Code setting > .mam.env > default', () => {
    fs.writeFileSync(path.join(ws, '.mam.env'), 'MAM_START_TIMEOUT_S=10\nMAM_HEARTBEAT_S=11\nMAM_JOB_TIMEOUT_S=12\nMAM_DISPATCH_WAIT_S=13\n');
    const r = resolveConfig({
      workspace: ws,
      env: { MAM_HEARTBEAT_S: '21', MAM_JOB_TIMEOUT_S: '22', MAM_START_TIMEOUT_S: '20' },
      settings: { 'timers.jobTimeout': 32, 'timers.dispatchWait': 33, 'timers.startTimeout': 30 },
      flags: { startTimeoutS: 40 },
    });
    assert.deepEqual(
      [r.values.startTimeoutS, r.values.heartbeatS, r.values.jobTimeoutS, r.values.dispatchWaitS],
      [40, 21, 22, 33],
    );
    assert.deepEqual([r.sources.startTimeoutS, r.sources.heartbeatS, r.sources.jobTimeoutS, r.sources.dispatchWaitS], ['flag', 'env', 'env', 'setting']);
    assert.equal(resolveConfig({ workspace: ws, env: {} }).sources.dispatchWaitS, '.mam.env');
  });

  it("reads the seeds' HERDR_SESSION_NAME and TMUX_SERVER_NAME where MAM's own names are unset, and says which it read", () => {
    const seedOnly = resolveConfig({ workspace: ws, env: { HERDR_SESSION_NAME: 'my-project', TMUX_SERVER_NAME: 'seeds' } });
    assert.deepEqual([seedOnly.values.herdrSession, seedOnly.values.tmuxServer], ['my-project', 'seeds']);
    assert.equal(sourceOf(seedOnly, 'herdrSession'), 'HERDR_SESSION_NAME in the environment');
    const both = resolveConfig({ workspace: ws, env: { MAM_HERDR_SESSION: 'ours', HERDR_SESSION_NAME: 'my-project' } });
    assert.equal(both.values.herdrSession, 'ours');
    assert.equal(sourceOf(both, 'herdrSession'), 'MAM_HERDR_SESSION in the environment');
    fs.writeFileSync(path.join(ws, '.mam.env'), 'HERDR_SESSION_NAME=from-file\n');
    const file = resolveConfig({ workspace: ws, env: {} });
    assert.equal(file.values.herdrSession, 'from-file');
    assert.match(sourceOf(file, 'herdrSession'), /^HERDR_SESSION_NAME in .*\.mam\.env$/);
    assert.equal(resolveConfig({ workspace: ws, env: { HERDR_SESSION_NAME: 'env-wins' } }).values.herdrSession, 'env-wins');
  });

  it('rejects non-numeric and negative timers, naming the variable and where it came from', () => {
    assert.throws(() => resolveConfig({ workspace: ws, env: { MAM_START_TIMEOUT_S: 'soon' } }), (e: unknown) => e instanceof ConfigError && /MAM_START_TIMEOUT_S in the environment: must be a number of seconds/.test(e.message));
    assert.throws(() => resolveConfig({ workspace: ws, env: { MAM_JOB_TIMEOUT_S: '-5' } }), /MAM_JOB_TIMEOUT_S/);
    fs.writeFileSync(path.join(ws, '.mam.env'), 'MQTT_PORT=99999\n');
    assert.throws(() => resolveConfig({ workspace: ws, env: {} }), /MQTT_PORT in .*\.mam\.env: must be between 0 and 65535/);
  });
});
