import * as fs from 'node:fs';
import * as path from 'node:path';

/**
 * Checks that `program` can be started: a path (relative to `cwd`) to an executable file, or a
 * name found on `PATH`. Returns why it cannot, or undefined when it can. Checked before a pane is
 * placed, so a missing agent CLI is a clear error instead of a pane that closes at once.
 */
export function findProgram(program: string, cwd: string, searchPath: string): string | undefined {
  if (program.includes('/')) {
    const file = path.resolve(cwd, program);
    return isExecutable(file) ? undefined : `agent command '${program}' is not an executable file`;
  }
  for (const dir of searchPath.split(':')) {
    if (dir && isExecutable(path.join(dir, program))) return undefined;
  }
  return `agent command '${program}' was not found on PATH`;
}

function isExecutable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}
