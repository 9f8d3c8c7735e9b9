import { strict as assert } from 'node:assert';
import { Emitter, waitForEvent } from '../../src/core/base/emitter';
import { DisposableStore, toDisposable } from '../../src/core/base/disposable';

describe('Emitter and Disposable', () => {
  it('delivers to listeners in order until they are disposed', () => {
    const emitter = new Emitter<number>();
    const seen: string[] = [];
    const a = emitter.event((n) => seen.push(`a${n}`));
    emitter.event((n) => seen.push(`b${n}`));
    emitter.fire(1);
    a.dispose();
    emitter.fire(2);
    assert.deepEqual(seen, ['a1', 'b1', 'b2']);
  });

  it('keeps delivering when one listener throws', () => {
    const errors: unknown[] = [];
    const emitter = new Emitter<number>((err) => errors.push(err));
    const seen: number[] = [];
    emitter.event(() => {
      throw new Error('boom');
    });
    emitter.event((n) => seen.push(n));
    emitter.fire(7);
    assert.deepEqual(seen, [7]);
    assert.equal(errors.length, 1);
  });

  it('drops every listener on dispose and ignores later subscriptions', () => {
    const emitter = new Emitter<void>();
    let calls = 0;
    emitter.event(() => calls++);
    emitter.dispose();
    emitter.event(() => calls++);
    emitter.fire();
    assert.equal(calls, 0);
  });

  it('waitForEvent resolves on the first matching event and rejects after its bound', async () => {
    const emitter = new Emitter<number>();
    const waiting = waitForEvent(emitter.event, (n) => n > 2, 1000);
    [1, 2, 3, 4].forEach((n) => emitter.fire(n));
    assert.equal(await waiting, 3);
    await assert.rejects(waitForEvent(emitter.event, () => true, 20, 'nothing'), /timed out after 20 ms waiting for nothing/);
  });

  it('DisposableStore disposes in reverse order, once, and disposes late additions at once', () => {
    const order: string[] = [];
    const store = new DisposableStore();
    store.add(toDisposable(() => order.push('first')));
    store.add(toDisposable(() => order.push('second')));
    store.dispose();
    store.dispose();
    store.add(toDisposable(() => order.push('late')));
    assert.deepEqual(order, ['second', 'first', 'late']);
  });
});
