import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import { newJobId } from '../../src/core/base/ids';
import { resolveConfig } from '../../src/core/config/settings';
import { canonicalJson } from '../../src/core/messaging/protocol';
import { cancelTopics, CLOCK_SKEW_MS, dispatchSecretOf, dispatchTopics, readCancel, readDispatch, RefusedDispatch, signedCancel, signedDispatch, type DispatchPayload } from '../../src/core/remote/dispatchMessage';
import { SeenDispatches } from '../../src/core/remote/seenDispatches';
import { ControlPlanePaths } from '../../src/core/store/paths';
import { tempWorkspace } from '../support/helpers';

const SECRET = 'a'.repeat(32);

function dispatch(fields: Partial<DispatchPayload> = {}, secret = SECRET): DispatchPayload {
  return signedDispatch(
    {
      job_id: newJobId(), workspace_id: '0123456789abcdef', runner: 'R', task: 'do it', role: null, type: 'direct',
      timers: { start_timeout_s: 10, heartbeat_s: 30, idle_timeout_s: 120, timeout_s: 600 }, token: randomBytes(32).toString('hex'), ...fields,
    },
    secret,
  );
}

function refusal(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    if (err instanceof RefusedDispatch) return err.reason;
    throw err;
  }
  assert.fail('accepted');
}

describe('remote dispatch messages', () => {
  const read = (d: object, topic = dispatchTopics.job('R', (d as DispatchPayload).job_id), now?: number) => readDispatch(Buffer.from(JSON.stringify(d)), topic, 'R', SECRET, now);

  it('a signed dispatch reads back as it was sent', () => {
    const d = dispatch({ session: 'S', appendix: 'more' });
    assert.deepEqual(read(d), d);
  });

  it('is refused unsigned, mis-signed, altered, or signed with another secret', () => {
    const d = dispatch();
    const { sig: _sig, ...unsigned } = d;
    assert.equal(refusal(() => read(unsigned)), 'missing_signature');
    assert.equal(refusal(() => read({ ...d, sig: '0'.repeat(64) })), 'bad_signature');
    assert.equal(refusal(() => read({ ...d, task: 'something else' })), 'bad_signature');
    assert.equal(refusal(() => read(dispatch({}, 'b'.repeat(32)))), 'bad_signature');
  });

  it('is refused on the wrong topic, for another runner, or off schema', () => {
    const d = dispatch();
    assert.equal(refusal(() => read(d, dispatchTopics.job('R', newJobId()))), 'wrong_topic');
    assert.equal(refusal(() => read(d, 'mam/remote/R/dispatch')), 'wrong_topic');
    assert.equal(refusal(() => read(dispatch({ runner: 'Q' }))), 'wrong_topic');
    assert.equal(refusal(() => read({ ...d, extra: 1 })), 'schema');
    assert.equal(refusal(() => read({ ...d, timers: { ...d.timers, timeout_s: -1 } })), 'schema');
    assert.equal(refusal(() => readDispatch(Buffer.from('{"__proto__":{}}'), dispatchTopics.job('R', d.job_id), 'R', SECRET)), 'forbidden_key');
    assert.equal(refusal(() => readDispatch(Buffer.from('nope'), dispatchTopics.job('R', d.job_id), 'R', SECRET)), 'malformed_json');
  });

  it('expires once its start timeout and the clock allowance have passed', () => {
    const d = dispatch();
    const sent = Date.parse(d.ts);
    assert.ok(read(d, undefined, sent + 10_000 + CLOCK_SKEW_MS));
    assert.equal(refusal(() => read(d, undefined, sent + 10_001 + CLOCK_SKEW_MS)), 'expired');
  });

  it('the signature covers the canonical form of every other field', () => {
    const d = dispatch();
    const reordered = JSON.parse(canonicalJson(d)) as DispatchPayload;
    assert.deepEqual(read(reordered), d);
  });

  it('MAM_DISPATCH_SECRET: missing or short is a usage error', () => {
    const ws = tempWorkspace();
    assert.throws(() => dispatchSecretOf(resolveConfig({ workspace: ws, env: {} })), /need MAM_DISPATCH_SECRET/);
    assert.throws(() => dispatchSecretOf(resolveConfig({ workspace: ws, env: { MAM_DISPATCH_SECRET: 'short' } })), /at least 16/);
    assert.equal(dispatchSecretOf(resolveConfig({ workspace: ws, env: { MAM_DISPATCH_SECRET: SECRET } })), SECRET);
  });
});

describe('remote cancel messages', () => {
  const id = newJobId();
  const cancel = (secret = SECRET, fields: { job_id?: string; runner?: string } = {}) => signedCancel({ job_id: id, workspace_id: '0123456789abcdef', runner: 'R', ...fields }, secret);
  const read = (c: object, topic = cancelTopics.job('R', id)) => readCancel(Buffer.from(JSON.stringify(c)), topic, 'R', SECRET);

  it('a signed cancel reads back as it was sent', () => {
    const c = cancel();
    assert.deepEqual(read(c), c);
  });

  it('is refused unsigned, mis-signed, altered, on the wrong topic or off schema', () => {
    const c = cancel();
    const { sig: _sig, ...unsigned } = c;
    assert.equal(refusal(() => read(unsigned)), 'missing_signature');
    assert.equal(refusal(() => read(cancel('b'.repeat(32)))), 'bad_signature');
    assert.equal(refusal(() => read({ ...c, workspace_id: 'feedfacefeedface' })), 'bad_signature');
    assert.equal(refusal(() => read(c, cancelTopics.job('R', newJobId()))), 'schema');
    assert.equal(refusal(() => read(c, dispatchTopics.job('R', id))), 'wrong_topic');
    assert.equal(refusal(() => read(cancel(SECRET, { runner: 'Q' }))), 'schema');
    assert.equal(refusal(() => read({ ...c, extra: 1 })), 'schema');
    assert.equal(refusal(() => readCancel(Buffer.from('nope'), cancelTopics.job('R', id), 'R', SECRET)), 'malformed_json');
  });
});

describe('remote: the seen-dispatch set', () => {
  it('takes a dispatch once; the same job or nonce again is a replay; expired entries go', async () => {
    const paths = new ControlPlanePaths(tempWorkspace());
    const seen = new SeenDispatches(paths, 'R');
    const now = Date.now();
    assert.equal(await seen.remember({ job_id: 'j-1', nonce: 'aa' }, now + 1000, now), true);
    assert.equal(await seen.remember({ job_id: 'j-1', nonce: 'bb' }, now + 1000, now), false);
    assert.equal(await seen.remember({ job_id: 'j-2', nonce: 'aa' }, now + 1000, now), false);
    assert.equal(await new SeenDispatches(paths, 'R').remember({ job_id: 'j-1', nonce: 'aa' }, now + 1000, now), false, 'kept on disk');
    assert.equal(await seen.remember({ job_id: 'j-3', nonce: 'cc' }, now + 5000, now + 2000), true);
    const kept = JSON.parse(fs.readFileSync(seen.file, 'utf8')) as { seen: Array<{ job_id: string }> };
    assert.deepEqual(kept.seen.map((e) => e.job_id), ['j-3'], 'the expired entry was dropped');
    assert.equal((fs.statSync(seen.file).mode & 0o777).toString(8), '600');
  });

  it('an unreadable file refuses everything instead of forgetting', async () => {
    const paths = new ControlPlanePaths(tempWorkspace());
    const seen = new SeenDispatches(paths, 'R');
    fs.mkdirSync(path.dirname(seen.file), { recursive: true });
    fs.writeFileSync(seen.file, '{not json');
    await assert.rejects(seen.remember({ job_id: 'j-1', nonce: 'aa' }, Date.now() + 1000), /every dispatch is refused until it is repaired/);
  });
});
