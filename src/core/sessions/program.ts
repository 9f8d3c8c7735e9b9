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
  return whichProgram(program, searchPath) ? undefined : `agent command '${program}' was not found on PATH`;
}

/** The first executable file called `name` in the folders of `searchPath`, like `command -v`. */
export function whichProgram(name: string, searchPath: string): string | undefined {
  for (const dir of searchPath.split(path.delimiter)) {
    if (dir && isExecutable(path.join(dir, name))) return path.join(dir, name);
  }
  return undefined;
}

function isExecutable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}
