import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { newJobId } from '../../src/core/base/ids';
import { controlPlane, jobRecord, tempWorkspace } from '../support/helpers';

describe('job store and audit log', () => {
  let ws: string;
  beforeEach(() => {
    ws = tempWorkspace();
  });

  it('creates, reads, updates and lists job records, newest first', async () => {
    const cp = controlPlane(ws);
    const older = jobRecord({ created_at: '2026-01-01T00:00:00.000Z' });
    const newer = jobRecord({ created_at: '2026-02-01T00:00:00.000Z', extra_field: { kept: true } });
    await cp.jobs.create(older);
    await cp.jobs.create(newer);
    await assert.rejects(cp.jobs.create(older), /already exists/);
    const updated = await cp.jobs.update(older.id, (j) => ({ ...j, state: 'started', seq: 1 }));
    assert.equal(updated.state, 'started');
    assert.equal(cp.jobs.get(older.id)?.seq, 1);
    assert.deepEqual(cp.jobs.list().jobs.map((j) => j.id), [newer.id, older.id]);
    assert.deepEqual(cp.jobs.get(newer.id)?.extra_field, { kept: true });
  });

  it('peek: a record as this process last saw it while the file is unchanged, the new one once another process replaced it or it was edited in place', async () => {
    const here = controlPlane(ws);
    const other = controlPlane(ws); // another process's store: nothing of this one's memory
    const job = jobRecord();
    await here.jobs.create(job);
    const seen = here.jobs.peek(job.id);
    assert.equal(seen?.seq, 0);
    assert.equal(here.jobs.peek(job.id), seen, 'unchanged file: the record this process wrote, not read again');
    await other.jobs.update(job.id, (j) => ({ ...j, seq: 1 }));
    assert.equal(here.jobs.peek(job.id)?.seq, 1, 'replaced by another process: read again');
    // An editor writing the file in place keeps its inode: its size and times still tell.
    const file = path.join(ws, '.mam', 'jobs', `${job.id}.json`);
    const fd = fs.openSync(file, 'r+');
    const text = fs.readFileSync(file, 'utf8').replace('"seq": 1', '"seq": 12');
    fs.writeSync(fd, text, 0);
    fs.closeSync(fd);
    assert.equal(here.jobs.peek(job.id)?.seq, 12, 'edited in place: read again');
    fs.rmSync(file);
    assert.equal(here.jobs.peek(job.id), undefined, 'removed: none');
  });

  it('refuses an invalid update and keeps the old record', async () => {
    const cp = controlPlane(ws);
    const job = jobRecord();
    await cp.jobs.create(job);
    await assert.rejects(cp.jobs.update(job.id, (j) => ({ ...j, state: 'exploded' as never })), /state must be one of/);
    assert.equal(cp.jobs.get(job.id)?.state, 'registered');
  });

  it('lists unreadable job files instead of failing', async () => {
    const cp = controlPlane(ws);
    await cp.jobs.create(jobRecord());
    fs.writeFileSync(path.join(cp.paths.jobsDir, 'j-broken.json'), '{"id": ');
    const listing = cp.jobs.list();
    assert.equal(listing.jobs.length, 1);
    assert.deepEqual(listing.unreadable.map((u) => u.file), ['j-broken.json']);
  });

  it('rejects job IDs that could escape the jobs folder', () => {
    const cp = controlPlane(ws);
    for (const bad of ['../x', 'a/b', '', '.', 'x'.repeat(200)]) assert.throws(() => cp.jobs.get(bad), /is not a job ID/);
  });

  it("appendUnlessLogged: an event already in the log's tail writes nothing, a torn tail included; a new one cuts the torn line and is appended", async () => {
    const cp = controlPlane(ws);
    const id = newJobId();
    const at = new Date().toISOString();
    await cp.audit.append(id, { type: 'event', at, event: 'started', seq: 1 });
    await cp.audit.append(id, { type: 'event', at, event: 'progress', seq: 2, detail: 'half' });
    const file = path.join(cp.paths.auditJobDir(id), 'events.ndjson');
    fs.appendFileSync(file, '{"type":"event","at":"x","event":"progress","seq":3,'); // a writer died mid-line
    const before = fs.readFileSync(file, 'utf8');
    assert.equal(await cp.audit.appendUnlessLogged(id, 2, [{ type: 'event', at, event: 'progress', seq: 2, detail: 'half' }]), false);
    assert.equal(fs.readFileSync(file, 'utf8'), before, 'logged already: nothing written, nothing cut');
    // seq 3's torn line is not an event in the log: it is cut and the event appended whole.
    assert.equal(await cp.audit.appendUnlessLogged(id, 3, [{ type: 'event', at, event: 'progress', seq: 3 }]), true);
    const read = cp.audit.readEntries(id);
    assert.deepEqual(read.entries.map((e) => (e.type === 'event' ? e.seq : -1)), [1, 2, 3]);
    assert.equal(read.badLines, 0);
  });

  it('appends audit entries as whole lines and cuts a torn tail before appending', async () => {
    const cp = controlPlane(ws);
    const id = newJobId();
    const at = new Date().toISOString();
    cp.audit.writeMeta(id, { id });
    await cp.audit.append(id, { type: 'transition', at, from: null, to: 'registered' });
    await cp.audit.append(id, { type: 'event', at, event: 'started', seq: 1 });
    const file = path.join(cp.paths.auditJobDir(id), 'events.ndjson');
    fs.appendFileSync(file, '{"type":"event","at":"x","ev'); // a writer died mid-line
    assert.equal(cp.audit.readEntries(id).entries.length, 2, 'readers skip the torn line');
    assert.equal(cp.audit.readEntries(id).badLines, 0);
    await cp.audit.append(id, { type: 'event', at, event: 'completed', seq: 2 });
    const lines = fs.readFileSync(file, 'utf8').split('\n').filter(Boolean);
    assert.equal(lines.length, 3);
    assert.deepEqual(lines.map((l) => JSON.parse(l).type), ['transition', 'event', 'event']);
    cp.audit.writeStatus(id, { state: 'completed' });
    assert.deepEqual(cp.audit.readStatus(id), { state: 'completed' });
    assert.deepEqual(cp.audit.readMeta(id), { id });
  });
});
