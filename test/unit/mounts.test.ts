import { strict as assert } from 'node:assert';
import { mountOf, networkFsTypeOf, parseMountTable } from '../../src/core/store/mounts';

const TABLE = [
  'sysfs /sys sysfs rw 0 0',
  '/dev/vda1 / ext4 rw,relatime 0 0',
  'nas:/export/home /home/dev nfs4 rw 0 0',
  '//files/share /mnt/my\\040share cifs rw 0 0',
  'dev@box:/src /mnt/box fuse.sshfs rw 0 0',
  'tmpfs /home/dev/tmp tmpfs rw 0 0',
].join('\n');

describe('network filesystem detection', () => {
  it('finds the mount holding a path by the longest mount point', () => {
    const mounts = parseMountTable(TABLE);
    assert.equal(mountOf('/home/dev/project/.mam', mounts)?.fsType, 'nfs4');
    assert.equal(mountOf('/home/dev/tmp/x', mounts)?.fsType, 'tmpfs');
    assert.equal(mountOf('/home/developer', mounts)?.fsType, 'ext4');
  });

  it('flags NFS, CIFS (with escaped spaces) and SSHFS, and nothing local', () => {
    assert.equal(networkFsTypeOf('/home/dev/project/.mam', TABLE), 'nfs4');
    assert.equal(networkFsTypeOf('/mnt/my share/ws/.mam', TABLE), 'cifs');
    assert.equal(networkFsTypeOf('/mnt/box/.mam', TABLE), 'fuse.sshfs');
    assert.equal(networkFsTypeOf('/srv/ws/.mam', TABLE), undefined);
    assert.equal(networkFsTypeOf('/home/dev/tmp/.mam', TABLE), undefined);
  });
});
