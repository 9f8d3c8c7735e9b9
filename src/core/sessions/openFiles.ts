import * as fs from 'node:fs';

/**
 * The files a process and its descendants hold open, from /proc (Linux; elsewhere: none). An agent
 * that picks its own conversation ID keeps that conversation's file open while it runs, so this
 * tells exactly which conversation a pane's agent is in — where its start time alone cannot tell
 * two agents started in the same folder a second apart.
 */
export function openFilesOf(rootPid: number): string[] {
  const files = new Set<string>();
  for (const pid of [rootPid, ...descendantsOf(rootPid)]) {
    let fds: string[];
    try {
      fds = fs.readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue; // gone, or not ours to read
    }
    for (const fd of fds) {
      try {
        const target = fs.readlinkSync(`/proc/${pid}/fd/${fd}`);
        if (target.startsWith('/')) files.add(target);
      } catch {
        // closed meanwhile
      }
    }
  }
  return [...files];
}

/** Every process below `rootPid`, from the parent pid each /proc/<pid>/stat records. */
function descendantsOf(rootPid: number): number[] {
  const children = new Map<number, number[]>();
  let entries: string[];
  try {
    entries = fs.readdirSync('/proc');
  } catch {
    return [];
  }
  for (const name of entries) {
    const pid = Number(name);
    if (!Number.isInteger(pid)) continue;
    const ppid = parentOf(pid);
    if (ppid !== undefined) children.set(ppid, [...(children.get(ppid) ?? []), pid]);
  }
  const out: number[] = [];
  const queue = [...(children.get(rootPid) ?? [])];
  while (queue.length > 0 && out.length < 10_000) {
    const pid = queue.shift()!;
    out.push(pid);
    queue.push(...(children.get(pid) ?? []));
  }
  return out;
}

/** The parent pid /proc/<pid>/stat records; undefined when the process is gone or /proc is not there. */
export function parentOf(pid: number): number | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // "pid (comm) state ppid …": comm may hold spaces and parentheses; the last ')' ends it.
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    return Number.isInteger(ppid) ? ppid : undefined;
  } catch {
    return undefined; // exited meanwhile, or not Linux
  }
}
