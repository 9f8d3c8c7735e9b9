import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { injectedLine, writeBrief } from '../../src/core/jobs/brief';
import { BriefFormatError, eventArgs, parseBrief, parseJobLine } from '../../src/scriptedAgent/briefReader';
import { tempDir } from '../support/helpers';
import { jobRecord } from '../support/rows';

describe('reading a job from the agent side (briefReader: the inverse of brief.ts)', () => {
  const write = (overrides: { cliPath: string; workspace: string; task: string; role?: string; appendix?: string }): string => {
    const job = jobRecord({ role: overrides.role ?? 'worker' });
    const file = path.join(tempDir('brief'), 'brief.md');
    writeBrief({ job, task: overrides.task, cliPath: overrides.cliPath, workspace: overrides.workspace, heartbeatS: 7, ...(overrides.appendix ? { appendix: overrides.appendix } : {}) }, file);
    return fs.readFileSync(file, 'utf8');
  };

  it('gets back the CLI, workspace, job, role, heartbeat and task writeBrief put in, whatever the paths hold', () => {
    for (const [cliPath, workspace] of [
      ['/opt/mam/dist/cli.js', '/home/ada/project'],
      ['/tmp/with space/dist/cli.js', '/tmp/a "quoted" $HOME `x` back\\slash/ws'],
      ['/tmp/한국어/cli.js', "/tmp/it's/ws"],
    ] as const) {
      const text = write({ cliPath, workspace, task: '# Fix it\n\nThe details.', role: 'reviewer', appendix: '### Jobs\n\n- none' });
      const brief = parseBrief(text);
      assert.equal(brief.cliPath, cliPath);
      assert.equal(brief.workspace, workspace);
      assert.equal(brief.role, 'reviewer');
      assert.equal(brief.type, 'direct');
      assert.equal(brief.heartbeatS, 7);
      assert.match(brief.jobId, /^j-/);
      assert.equal(brief.task, '# Fix it\n\nThe details.\n\n### Jobs\n\n- none');
      assert.equal(brief.loop, null);
      assert.deepEqual(eventArgs(brief, 'progress', ['--detail', 'x']), [cliPath, 'event', 'progress', '--job', brief.jobId, '--workspace', workspace, '--detail', 'x']);
    }
  });

  it('reads the typed line back, and nothing else as a job line', () => {
    assert.deepEqual(parseJobLine(injectedLine('j-20261129T201923Z-3f9a1c2b', '/ws with space/.mam/jobs/j-1/brief.md')), { jobId: 'j-20261129T201923Z-3f9a1c2b', briefPath: '/ws with space/.mam/jobs/j-1/brief.md' });
    assert.equal(parseJobLine('MAM job j-1: read the brief at /x'), undefined);
    assert.equal(parseJobLine('hello'), undefined);
  });

  it('names what is missing from a brief it cannot read', () => {
    assert.throws(() => parseBrief('# MAM job\n\n## Task\n\nx\n\n## Protocol\n'), BriefFormatError);
    const text = write({ cliPath: '/c.js', workspace: '/w', task: 'x' });
    assert.throws(() => parseBrief(text.replace('## Task', '## Something')), /no "## Task" section/);
  });

  it('reads the commands despite task lines that look like commands but do not parse', () => {
    const text = write({ cliPath: '/c.js', workspace: '/w', task: "node isn't \"quoted right\nnode 'open" });
    assert.equal(parseBrief(text).cliPath, '/c.js');
  });
});
