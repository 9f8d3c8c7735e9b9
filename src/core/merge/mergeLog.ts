import * as fs from 'node:fs';
import * as path from 'node:path';
import { isoOn, systemClock } from '../base/clock';
import { printableLines } from '../base/ids';
import type { ControlPlanePaths } from '../store/paths';

/**
 * An entry's log, `.mam/merge/logs/<id>.log`: what ran, git's and the validation's output, with
 * timestamps, for `mam merge status` and the VS Code view. Only the runner (one at a time: the
 * run lock) and enqueue write it, appending; control characters are stripped from what others wrote.
 */
export class MergeLog {
  constructor(
    private readonly paths: ControlPlanePaths,
    private readonly now: () => string = () => isoOn(systemClock),
  ) {}

  file(entryId: string): string {
    return this.paths.mergeLog(entryId);
  }

  /** One line (or a block: output of a program, indented under its heading). */
  write(entryId: string, line: string, output?: string): void {
    const file = this.file(entryId);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    let text = `[${this.now()}] ${printableLines(line).replace(/\n/g, ' ')}\n`;
    const body = output === undefined ? '' : printableLines(output).trimEnd();
    if (body) text += `${body.split('\n').map((l) => `    ${l}`).join('\n')}\n`;
    fs.appendFileSync(file, text);
  }

  /** The last `n` lines, or none when there is no log yet. */
  tail(entryId: string, n = 5): string[] {
    try {
      const lines = fs.readFileSync(this.file(entryId), 'utf8').split('\n').filter((l) => l !== '');
      return lines.slice(-n);
    } catch {
      return [];
    }
  }
}
