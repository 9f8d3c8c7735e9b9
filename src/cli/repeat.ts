/**
 * Runs `tick` at once and then every `intervalMs` until SIGINT or SIGTERM, which also end the wait
 * between two ticks at once (for `mam monitor` and `mam session monitor`), or until a tick says 'stop'.
 */
export async function repeatUntilSignal(intervalMs: number, tick: () => Promise<void | 'stop'>): Promise<void> {
  let wake: () => void = () => {};
  let stopping = false;
  const stop = (): void => {
    stopping = true;
    wake();
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  try {
    while (!stopping) {
      if ((await tick()) === 'stop') break;
      if (stopping) break;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, intervalMs);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  } finally {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
  }
}
