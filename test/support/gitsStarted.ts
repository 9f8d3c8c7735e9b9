/**
 * The gits this process starts from now on, by subcommand, and how many processes it started for
 * them: every git of the core goes through node's execFile (base/git.ts), git itself by its path
 * on PATH, or a shell that runs `git add` then `git write-tree` (gitThenWriteTree). Call `stop` to
 * read them and stop counting.
 */
export function gitsStarted(): { stop: () => { gits: string[]; processes: number } } {
  // The module itself (an import's namespace is a copy): git.ts calls its execFile.
  const cp = require('node:child_process') as { execFile: (...args: unknown[]) => unknown };
  const execFile = cp.execFile;
  const gits: string[] = [];
  let processes = 0;
  cp.execFile = (...args: unknown[]) => {
    const file = String(args[0]);
    const argv = args[1] as string[];
    if (file === 'git' || file.endsWith('/git')) {
      processes++;
      gits.push(argv.find((a, i, all) => a !== '-c' && all[i - 1] !== '-c')!);
    } else if (file === '/bin/sh' && argv[1]?.includes('write-tree')) {
      // sh -c SCRIPT NAME GIT M FLAGS… FIRST'S M ARGUMENTS
      processes++;
      gits.push(argv[argv.length - Number(argv[4])]!, 'write-tree');
    }
    return execFile(...args);
  };
  return {
    stop: () => {
      cp.execFile = execFile;
      return { gits, processes };
    },
  };
}
