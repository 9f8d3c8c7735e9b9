/**
 * Looks every `everyMs` until `done()` holds, the call is cancelled, or `timeoutS` passes; resolves
 * true when it stopped without `done()`. For what another process writes to disk (a loop or a plan
 * run by a process of its own), which no event of this one announces.
 */
export function waitUntil(done: () => boolean, options: { signal: AbortSignal; timeoutS?: number; everyMs?: number }): Promise<boolean> {
  const every = options.everyMs ?? 250;
  const deadline = options.timeoutS === undefined ? Infinity : Date.now() + options.timeoutS * 1000;
  return new Promise((resolve) => {
    let timer: NodeJS.Timeout | undefined;
    const stop = (stopped: boolean): void => {
      clearTimeout(timer);
      options.signal.removeEventListener('abort', onAbort);
      resolve(stopped);
    };
    const onAbort = (): void => stop(true);
    const look = (): void => {
      if (done()) return stop(false);
      if (Date.now() >= deadline) return stop(true);
      timer = setTimeout(look, Math.min(every, Math.max(0, deadline - Date.now())));
    };
    options.signal.addEventListener('abort', onAbort);
    if (options.signal.aborted) return stop(true);
    look();
  });
}
