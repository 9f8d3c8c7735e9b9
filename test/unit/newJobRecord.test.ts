import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { validateJobRecord } from '../../src/core/store/jobSchema';
import { readJobToken, writeJobToken } from '../../src/core/store/jobToken';
import { newJobRecord } from '../../src/core/store/newJobRecord';
import { ControlPlanePaths } from '../../src/core/store/paths';
import { tempDir } from '../support/helpers';

const ID = 'j-20260101T000000Z-0000abcd';
const AT = new Date('2026-01-01T12:00:00.000Z');

describe('newJobRecord: a job as it is registered', () => {
  it('given only its ID, session and type: registered, seq 0, signed, created at the time given, nothing delivered yet', () => {
    assert.deepEqual(newJobRecord({ id: ID, session: 'w1', type: 'direct' }, AT), {
      id: ID, session: 'w1', type: 'direct', role: null, state: 'registered', reason: null, created_at: AT.toISOString(), updated_at: AT.toISOString(), seq: 0,
      parent_job: null, detail: null, signed: true, delivery: null, dispatched_at: null, started_at: null, last_event_at: null, finished_at: null, missing: [],
    });
  });

  it('what the caller passes wins over the defaults, and fields of its own (a mirror\'s origin) are kept', () => {
    const owner = { pid: 1, host: 'h', token: 't' };
    const job = newJobRecord({ id: ID, session: 'remote:R', type: 'loop', role: 'worker', parent_job: 'j-20260101T000000Z-00000001', signed: false, owner, remote: { runner: 'R' } }, AT);
    assert.deepEqual([job.role, job.parent_job, job.signed, job.owner, job.remote], ['worker', 'j-20260101T000000Z-00000001', false, owner, { runner: 'R' }]);
  });

  it('passes the record validator', () => {
    assert.doesNotThrow(() => validateJobRecord(newJobRecord({ id: ID, session: 'w1', type: 'discuss' }), 'new'));
  });

  it('two records never share their missing list', () => {
    const a = newJobRecord({ id: ID, session: 'w1', type: 'direct' });
    const b = newJobRecord({ id: ID, session: 'w1', type: 'direct' });
    a.missing!.push(3);
    assert.deepEqual(b.missing, []);
  });
});

describe('a job\'s token file', () => {
  const paths = () => new ControlPlanePaths(tempDir('token'));

  it('reads back what was written, owner-only', () => {
    const p = paths();
    fs.mkdirSync(p.jobDir(ID), { recursive: true });
    writeJobToken(p, ID, 'f00d');
    assert.equal(readJobToken(p, ID), 'f00d');
    assert.equal(fs.statSync(path.join(p.jobDir(ID), 'token')).mode & 0o777, 0o600);
  });

  it('a token written by hand with a newline reads without it', () => {
    const p = paths();
    fs.mkdirSync(p.jobDir(ID), { recursive: true });
    fs.writeFileSync(path.join(p.jobDir(ID), 'token'), 'f00d\n');
    assert.equal(readJobToken(p, ID), 'f00d');
  });

  it('no file, or an empty one, is no token', () => {
    const p = paths();
    assert.equal(readJobToken(p, ID), undefined);
    fs.mkdirSync(p.jobDir(ID), { recursive: true });
    fs.writeFileSync(path.join(p.jobDir(ID), 'token'), ' \n');
    assert.equal(readJobToken(p, ID), undefined);
  });
});
