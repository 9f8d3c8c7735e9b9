import { systemClock, type Clock } from './clock';
import type { Disposable } from './disposable';

/** The shape of vscode.Event<T>: subscribe with a listener, get a Disposable back. */
export type Event<T> = (listener: (e: T) => unknown, thisArg?: unknown, disposables?: Disposable[]) => Disposable;

/**
 * A small vscode-shaped event emitter. Listeners run synchronously in registration order; one
 * listener throwing does not stop the others (the error goes to `onListenerError`).
 */
export class Emitter<T> implements Disposable {
  private listeners: Array<(e: T) => unknown> = [];
  private disposed = false;
  private _event: Event<T> | undefined;

  constructor(private readonly onListenerError: (err: unknown) => void = (err) => queueMicrotask(() => { throw err; })) {}

  get event(): Event<T> {
    this._event ??= (listener, thisArg, disposables) => {
      if (this.disposed) return { dispose() {} };
      const bound = thisArg === undefined ? listener : listener.bind(thisArg);
      this.listeners.push(bound);
      const subscription: Disposable = {
        dispose: () => {
          this.listeners = this.listeners.filter((l) => l !== bound);
        },
      };
      disposables?.push(subscription);
      return subscription;
    };
    return this._event;
  }

  fire(e: T): void {
    for (const listener of [...this.listeners]) {
      try {
        listener(e);
      } catch (err) {
        this.onListenerError(err);
      }
    }
  }

  get hasListeners(): boolean {
    return this.listeners.length > 0;
  }

  dispose(): void {
    this.disposed = true;
    this.listeners = [];
  }
}

/** Resolves with the first event that satisfies `predicate`, or rejects after `timeoutMs` of `clock`'s time. */
export function waitForEvent<T>(event: Event<T>, predicate: (e: T) => boolean, timeoutMs: number, what = 'event', clock: Clock = systemClock): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = clock.setTimeout(() => {
      sub.dispose();
      reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`));
    }, timeoutMs);
    const sub = event((e) => {
      if (predicate(e)) {
        clock.clearTimeout(timer);
        sub.dispose();
        resolve(e);
      }
    });
  });
}
