import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { injectedLine, writeBrief } from '../../src/core/jobs/brief';
import { LineInput, readJob, sendEvent } from '../../src/scriptedAgent/kit';
import { tempDir } from '../support/helpers';
import { jobRecord } from '../support/rows';

describe('the scripted-agent kit', () => {
  describe('keyboard input as a recorder (keepControls: the test fixtures)', () => {
    it('keeps Escape, control characters and a CR inside a paste in the line, byte for byte', () => {
      const input = new LineInput({ keepControls: true });
      assert.deepEqual(input.feed('ab\x7fb\t\x1b'), [{ kind: 'echo', text: 'ab' }, { kind: 'erase' }, { kind: 'echo', text: 'b\t' }]);
      assert.deepEqual(input.feed('[Ax\b\r'), [{ kind: 'echo', text: '\x1b[Ax\b' }, { kind: 'submit', line: 'ab\t\x1b[Ax\b' }]);
      assert.deepEqual(input.feed('\x1b[200~one\rtwo\nthree\x03\x1b[201~\r'), [{ kind: 'echo', text: 'one\rtwo\r\nthree\x03' }, { kind: 'submit', line: 'one\rtwo\nthree\x03' }]);
    });

    it('swallows the Enters acceptEnter refuses, keeping the line, and says whether text came in the same read', () => {
      const asked: boolean[] = [];
      const input = new LineInput({ keepControls: true, acceptEnter: (typed) => (asked.push(typed), asked.length > 2) });
      assert.deepEqual(input.feed('hi\r'), [{ kind: 'echo', text: 'hi' }, { kind: 'swallowed' }]);
      assert.deepEqual(input.feed('\r'), [{ kind: 'swallowed' }]);
      assert.deepEqual(input.feed('\r'), [{ kind: 'submit', line: 'hi' }]);
      assert.deepEqual(asked, [true, false, false]);
    });

    it('leaves on Ctrl-D only on an empty line, and keeps it as text otherwise', () => {
      const input = new LineInput({ keepControls: true });
      assert.deepEqual(input.feed('x\x04\r\x04'), [{ kind: 'echo', text: 'x\x04' }, { kind: 'submit', line: 'x\x04' }, { kind: 'eof' }]);
    });
  });

  describe('jobs and events', () => {
    it('reads the job a typed line names with its brief, and sends the brief\'s events with an argument array', async () => {
      const dir = tempDir('kit');
      const cli = path.join(dir, 'it\'s "cli" $x.js');
      fs.writeFileSync(cli, 'process.stdout.write(JSON.stringify(process.argv.slice(2))); process.exitCode = 3;');
      const briefPath = path.join(dir, 'brief.md');
      const job = jobRecord({});
      writeBrief({ job, task: 'Do it', cliPath: cli, workspace: dir, heartbeatS: 5 }, briefPath);

      assert.equal(readJob('hello'), undefined);
      const read = readJob(injectedLine(job.id, briefPath));
      assert.ok(read);
      assert.deepEqual(read.line, { jobId: job.id, briefPath });
      assert.deepEqual([read.brief.jobId, read.brief.cliPath, read.brief.workspace, read.brief.heartbeatS, read.brief.task], [job.id, cli, dir, 5, 'Do it']);

      const r = await sendEvent(read.brief, 'progress', ['--detail', 'a $(b) `c`'], dir);
      assert.equal(r.code, 3);
      assert.deepEqual(JSON.parse(r.stdout), ['event', 'progress', '--job', job.id, '--workspace', dir, '--detail', 'a $(b) `c`']);
    });

    it('throws when the brief a job line names cannot be read', () => {
      assert.throws(() => readJob(injectedLine('j-1', path.join(tempDir('kit'), 'missing.md'))), /ENOENT/);
    });
  });
});
