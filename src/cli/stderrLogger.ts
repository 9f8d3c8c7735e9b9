import type { Logger } from '../core/base/log';
import type { CliIo } from './command';

/** What `mam` logs, one line each on stderr: warnings and errors always, the rest with MAM_DEBUG. */
export function stderrLogger(io: CliIo): Logger {
  const debug = Boolean(io.env.MAM_DEBUG);
  return {
    debug: (m) => debug && io.stderr(`mam: debug: ${oneLine(m)}\n`),
    info: (m) => debug && io.stderr(`mam: ${oneLine(m)}\n`),
    warn: (m) => io.stderr(`mam: warning: ${oneLine(m)}\n`),
    error: (m) => io.stderr(`mam: error: ${oneLine(m)}\n`),
  };
}

export function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ').trim();
}
