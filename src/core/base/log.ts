/** The engine's log. The CLI writes warnings to stderr; the extension adapts it to a LogOutputChannel. */
export interface Logger {
  debug(message: string): void;
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

export const silentLogger: Logger = {
  debug() {},
  info() {},
  warn() {},
  error() {},
};

/** Collects messages in memory; for tests and for commands that report warnings at the end. */
export class MemoryLogger implements Logger {
  readonly lines: Array<{ level: 'debug' | 'info' | 'warn' | 'error'; message: string }> = [];
  debug(message: string): void {
    this.lines.push({ level: 'debug', message });
  }
  info(message: string): void {
    this.lines.push({ level: 'info', message });
  }
  warn(message: string): void {
    this.lines.push({ level: 'warn', message });
  }
  error(message: string): void {
    this.lines.push({ level: 'error', message });
  }
  messages(level?: 'debug' | 'info' | 'warn' | 'error'): string[] {
    return this.lines.filter((l) => level === undefined || l.level === level).map((l) => l.message);
  }
}
