import * as fs from 'node:fs';
import * as path from 'node:path';

/** Filesystem types on which local file locking and SQLite journaling cannot be trusted. */
const NETWORK_FS = new Set(['nfs', 'nfs4', 'cifs', 'smb3', 'smbfs', 'fuse.sshfs', 'sshfs', 'afs', '9p', 'ceph', 'glusterfs', 'fuse.glusterfs']);

export interface Mount {
  mountPoint: string;
  fsType: string;
}

/** Parses /proc/self/mounts (fields are space-separated; spaces inside fields are octal-escaped). */
export function parseMountTable(text: string): Mount[] {
  const mounts: Mount[] = [];
  for (const line of text.split('\n')) {
    const fields = line.trim().split(/\s+/);
    if (fields.length < 3) continue;
    mounts.push({ mountPoint: unescapeOctal(fields[1]!), fsType: fields[2]! });
  }
  return mounts;
}

/** The mount that holds `target`: the longest mount point that is a prefix of it. */
export function mountOf(target: string, mounts: readonly Mount[]): Mount | undefined {
  let best: Mount | undefined;
  for (const m of mounts) {
    const inside = target === m.mountPoint || target.startsWith(m.mountPoint.endsWith('/') ? m.mountPoint : `${m.mountPoint}/`);
    if (inside && (!best || m.mountPoint.length >= best.mountPoint.length)) best = m;
  }
  return best;
}

export function isNetworkFsType(fsType: string): boolean {
  return NETWORK_FS.has(fsType) || fsType.startsWith('nfs');
}

/**
 * The network filesystem type holding `dir` (e.g. 'nfs4'), or undefined on a local filesystem or
 * where the mount table cannot be read (not Linux).
 */
export function networkFsTypeOf(dir: string, mountTable = readMountTable()): string | undefined {
  if (mountTable === undefined) return undefined;
  const mount = mountOf(nearestExistingRealPath(dir), parseMountTable(mountTable));
  return mount && isNetworkFsType(mount.fsType) ? mount.fsType : undefined;
}

/** `dir` resolved through symlinks; for a path not created yet, its nearest existing ancestor's. */
function nearestExistingRealPath(dir: string): string {
  let current = path.resolve(dir);
  const rest: string[] = [];
  for (;;) {
    try {
      return path.join(fs.realpathSync(current), ...rest);
    } catch {
      const parent = path.dirname(current);
      if (parent === current) return path.resolve(dir);
      rest.unshift(path.basename(current));
      current = parent;
    }
  }
}

function readMountTable(): string | undefined {
  for (const file of ['/proc/self/mounts', '/proc/mounts']) {
    try {
      return fs.readFileSync(file, 'utf8');
    } catch {
      // try the next one
    }
  }
  return undefined;
}

function unescapeOctal(field: string): string {
  return field.replace(/\\([0-7]{3})/g, (_, oct: string) => String.fromCharCode(parseInt(oct, 8)));
}
