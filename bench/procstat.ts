/** CPU time and memory of processes, from /proc (Linux), for the benchmarks. */
import * as fs from 'node:fs';

const TICK_MS = 1000 / 100; // CLK_TCK is 100 on Linux

/** utime+stime (and the reaped children's) of a process, in ms, from /proc/<pid>/stat. */
export function procCpu(pid: number): { self: number; children: number } | undefined {
  try {
    const text = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return { self: (Number(f[11]) + Number(f[12])) * TICK_MS, children: (Number(f[13]) + Number(f[14])) * TICK_MS };
  } catch {
    return undefined;
  }
}

/** Busy and total jiffies of the whole machine, from /proc/stat. */
export function machineCpu(): { busy: number; total: number } {
  const f = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  const total = f.reduce((a, b) => a + b, 0);
  return { busy: total - f[3]! - f[4]!, total };
}


/** Resident memory of the processes, in MB, from /proc/<pid>/status. */
export function sumRssMb(pids: number[]): number {
  let kb = 0;
  for (const pid of pids) {
    try {
      kb += Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
    } catch {
      // gone
    }
  }
  return kb / 1024;
}

export function sumCpu(pids: number[]): number {
  return pids.reduce((a, pid) => a + (procCpu(pid)?.self ?? 0), 0);
}
