import { strict as assert } from 'node:assert';
import { DisposableBase, toDisposable } from '../../src/core/base/disposable';

/** An owner as the views write them: it registers what it creates. */
class Owner extends DisposableBase {
  own<T extends { dispose(): void }>(item: T): T {
    return this._register(item);
  }

  get gone(): boolean {
    return this.isDisposed;
  }
}

describe('DisposableBase (the one owner of disposables, core and views alike)', () => {
  it('disposes what it owns once, newest first', () => {
    const order: string[] = [];
    const owner = new Owner();
    owner.own(toDisposable(() => order.push('first')));
    owner.own(toDisposable(() => order.push('second')));
    assert.equal(owner.gone, false);
    owner.dispose();
    owner.dispose();
    assert.deepEqual(order, ['second', 'first']);
    assert.equal(owner.gone, true);
  });

  it('disposes at once what is registered after it is gone, and returns it', () => {
    const owner = new Owner();
    owner.dispose();
    let disposed = 0;
    const item = toDisposable(() => disposed++);
    assert.equal(owner.own(item), item);
    assert.equal(disposed, 1);
  });

  it('disposes the rest when one throws, then throws that error', () => {
    const order: string[] = [];
    const owner = new Owner();
    owner.own(toDisposable(() => order.push('a')));
    owner.own({ dispose: () => { throw new Error('b broke'); } });
    owner.own(toDisposable(() => order.push('c')));
    assert.throws(() => owner.dispose(), /b broke/);
    assert.deepEqual(order, ['c', 'a']);
  });
});
