import * as fs from 'node:fs';

/**
 * How many inotify watches this process holds, as the kernel counts them (one `inotify wd:` line per
 * watch in /proc/self/fdinfo of each inotify descriptor): what a file watcher left open leaves here,
 * whatever the code that opened it thinks. 0 where /proc cannot say (not Linux).
 */
export function inotifyWatches(): number {
  let n = 0;
  let fds: string[];
  try {
    fds = fs.readdirSync('/proc/self/fd');
  } catch {
    return 0;
  }
  for (const fd of fds) {
    try {
      if (fs.readlinkSync(`/proc/self/fd/${fd}`) !== 'anon_inode:inotify') continue;
      n += fs.readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8').split('\n').filter((l) => l.startsWith('inotify wd:')).length;
    } catch {
      // closed meanwhile
    }
  }
  return n;
}
