import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { execa } from 'execa';
import { acquire, withLock } from '../../src/core/store/lock';
import { LockTimeoutError } from '../../src/core/base/errors';
import { REPO_ROOT, tempDir, until } from '../support/helpers';

describe('cross-process lock', () => {
  let lockDir: string;
  beforeEach(() => {
    lockDir = path.join(tempDir('lock'), 'locks', 'thing.lock');
  });

  it('serializes holders: no two critical sections overlap', async () => {
    let inside = 0;
    let maxInside = 0;
    const order: number[] = [];
    await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        withLock(lockDir, async () => {
          inside++;
          maxInside = Math.max(maxInside, inside);
          await new Promise((r) => setImmediate(r));
          order.push(i);
          inside--;
        }),
      ),
    );
    assert.equal(maxInside, 1);
    assert.equal(order.length, 20);
    assert.equal(fs.existsSync(lockDir), false, 'released');
  });

  it('releases when the critical section throws', async () => {
    await assert.rejects(withLock(lockDir, () => {
      throw new Error('inside');
    }), /inside/);
    await withLock(lockDir, () => undefined, { timeoutMs: 1000 });
  });

  it('keeps the lock fresh while an asynchronous holder waits, and makes no timer for one done before the event loop turns', async () => {
    // The lock's refresh timer, counted where lock.ts finds it (the global, looked up at each call).
    const real = globalThis.setInterval;
    let made = 0;
    const counting = (...args: Parameters<typeof setInterval>): ReturnType<typeof setInterval> => (made++, real(...args));
    globalThis.setInterval = Object.assign(counting, real);
    try {
      await withLock(lockDir, () => assert.ok(fs.existsSync(lockDir)), { staleMs: 750 });
      assert.equal(made, 0, 'a synchronous holder: no refresh timer');
      assert.equal(fs.existsSync(lockDir), false, 'released');
      // Stale after 750 ms without a refresh (every 250 ms): a holder that waits past that keeps it, its mtime moving.
      await withLock(
        lockDir,
        async () => {
          const first = fs.statSync(lockDir).mtimeMs;
          await until(() => fs.statSync(lockDir).mtimeMs > first, 5_000, 'the lock to be refreshed');
        },
        { staleMs: 750 },
      );
      assert.equal(made, 1, 'an asynchronous holder: one refresh timer');
    } finally {
      globalThis.setInterval = real;
    }
  });

  it('times out with a message naming the holder', async () => {
    const release = await acquire(lockDir);
    try {
      await assert.rejects(
        acquire(lockDir, { timeoutMs: 200, what: 'the test resource' }),
        (e: unknown) => e instanceof LockTimeoutError && new RegExp(`the test resource is locked by process ${process.pid} on `).test(e.message),
      );
    } finally {
      release();
    }
  });

  it("takes a lock in the order this process's callers asked for it: a caller backing off is not overtaken by one that asks as the lock comes free", async () => {
    const order: string[] = [];
    const release = await acquire(lockDir);
    const first = withLock(lockDir, () => void order.push('first'));
    await new Promise((r) => setImmediate(r)); // the first caller has looked and is waiting
    // Let go and ask again in the same turn of the event loop: the file is free, and the first
    // caller is asleep between two looks.
    release();
    const second = withLock(lockDir, () => void order.push('second'));
    await Promise.all([first, second]);
    assert.deepEqual(order, ['first', 'second']);
  });

  it('a caller that gives up waiting for its turn keeps the order of the others: the next one takes the lock once it is free', async () => {
    const release = await acquire(lockDir);
    const impatient = acquire(lockDir, { timeoutMs: 50, what: 'the test resource' });
    const patient = withLock(lockDir, () => 'got it', { timeoutMs: 10_000 });
    await assert.rejects(impatient, (e: unknown) => e instanceof LockTimeoutError && e.message.includes(`process ${process.pid} on`));
    release();
    assert.equal(await patient, 'got it');
    assert.equal(fs.existsSync(lockDir), false, 'released');
  });

  it('a holder that went silent past the stale time and was taken over leaves the new holder its lock when it lets go', async () => {
    // A (this process) holds the lock and does not refresh it within staleMs (its refresh runs every
    // 250 ms at least); B, another process, takes it over as stale. A's release comes after a third
    // of staleMs, so it must read the lock back and see it is B's now, not remove it.
    const staleMs = 90;
    const releaseA = await acquire(lockDir, { staleMs });
    const b = execa(process.execPath, ['-r', 'esbuild-register', path.join(REPO_ROOT, 'test/fixtures/lockHolder.ts'), lockDir, String(staleMs)], { reject: false });
    try {
      const tokenB = await new Promise<string>((resolve, reject) => {
        b.stdout!.on('data', (chunk: Buffer) => {
          const m = /locked (\S+)/.exec(chunk.toString());
          if (m) resolve(m[1]!);
        });
        void b.then((r) => reject(new Error(`B exited early: ${r.stderr}`)));
      });
      const held = () => (JSON.parse(fs.readFileSync(lockDir, 'utf8')) as { token: string }).token;
      assert.equal(held(), tokenB, "B took A's silent lock over");
      releaseA();
      assert.ok(fs.existsSync(lockDir), "A's release left B's lock in place");
      assert.equal(held(), tokenB);
    } finally {
      b.kill('SIGKILL');
      await b;
    }
  });

  it('takes over at once from a holder killed with SIGKILL, long before the stale time', async () => {
    const holder = execa(process.execPath, ['-r', 'esbuild-register', path.join(REPO_ROOT, 'test/fixtures/lockHolder.ts'), lockDir], { reject: false });
    await new Promise<void>((resolve, reject) => {
      holder.stdout!.on('data', (chunk: Buffer) => chunk.toString().includes('locked') && resolve());
      void holder.then((r) => reject(new Error(`holder exited early: ${r.stderr}`)));
    });
    assert.ok(fs.statSync(lockDir).isFile(), 'the lock is one file, its owner inside');
    holder.kill('SIGKILL');
    await holder;
    // staleMs of a minute: only the dead-owner rule can let us in within the 5 s bound.
    await withLock(lockDir, () => undefined, { timeoutMs: 5000, staleMs: 60_000 });
    assert.deepEqual(fs.readdirSync(path.dirname(lockDir)), [], 'nothing left behind');
  });

  it("an older MAM's lock directory is understood: held by a live process it waits, left by a dead one it is taken over", async () => {
    const old = (pid: number) => {
      fs.mkdirSync(lockDir, { recursive: true });
      fs.writeFileSync(path.join(lockDir, 'owner'), JSON.stringify({ pid, host: os.hostname(), token: 'old', since: new Date().toISOString() }));
    };
    old(process.ppid);
    await assert.rejects(acquire(lockDir, { timeoutMs: 100, what: 'the old lock' }), (e: unknown) => e instanceof LockTimeoutError && e.message.includes(`process ${process.ppid} on`));
    fs.rmSync(lockDir, { recursive: true });
    const dead = execa(process.execPath, ['-e', '0']);
    await dead;
    old(dead.pid!);
    await withLock(lockDir, () => assert.ok(fs.statSync(lockDir).isFile()), { timeoutMs: 5000, staleMs: 60_000 });
    assert.deepEqual(fs.readdirSync(path.dirname(lockDir)), [], 'nothing left behind');
  });
});
