import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { JobOrigin, JobRecord } from '../../src/core/store/jobSchema';
import { notifierTellsEnd } from '../../src/views/window/noticePolicy';

const VIEWS = path.resolve(__dirname, '../../src/views');
const HERE = 'vscode:this-window';

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(full);
    return e.name.endsWith('.ts') ? [full] : [];
  });
}

/** A job's origin and target, as the Notifier reads them. */
const job = (origin: JobOrigin | undefined, target: 'local' | 'human' | 'remote' = 'local'): Pick<JobRecord, 'origin' | 'target'> => ({
  ...(origin ? { origin } : {}),
  target: { kind: target, name: 'w1' },
});

describe('the Notifier decides from where a job came from', () => {
  const never = () => assert.fail('asked whether a job with an origin belongs to a loop');

  for (const [what, record, told] of [
    ["this window's Delegate Job (its command's progress tells its end)", job({ kind: 'person', by: HERE }), false],
    ['a task this window assigned to a person (no progress follows it)', job({ kind: 'person', by: HERE }, 'human'), true],
    ["another window's command", job({ kind: 'person', by: 'vscode:another-window' }), true],
    ['the CLI', job({ kind: 'person', by: 'cli' }), true],
    ['a person, nobody said where', job({ kind: 'person', by: null }), true],
    ['a remote submitter', job({ kind: 'remote', by: 'ws-1234' }), true],
    ['a review loop', job({ kind: 'loop', by: 'l-20261201T000000Z-0a0b0c' }), false],
    ['the merge queue', job({ kind: 'merge', by: 'm-1' }), false],
    ["a session's onboarding (its caller tells)", job({ kind: 'onboarding', by: 'w1' }), false],
    ['a parent job', job({ kind: 'parent', by: 'j-20261201T000000Z-00000001' }), false],
  ] as const) {
    it(`${what}: ${told ? 'told here' : 'not told here'}`, () => {
      assert.equal(notifierTellsEnd(record, HERE, never), told);
    });
  }

  it('a record from before origins were kept falls back to the old rule: told unless a loop or a parent names it', () => {
    let asked = 0;
    assert.equal(notifierTellsEnd(job(undefined), HERE, () => (asked++, false)), true);
    assert.equal(notifierTellsEnd(job(undefined), HERE, () => (asked++, true)), false);
    assert.equal(asked, 2);
  });
});

describe('views make no job and run no work for the Notifier', () => {
  const files = sourceFiles(VIEWS);
  const rel = (f: string) => path.relative(path.resolve(VIEWS, '../..'), f);

  it('no job ID is made under src/views: the core names every job it submits', () => {
    assert.ok(files.length > 20, `read src/views (${files.length} files)`);
    assert.deepEqual(files.filter((f) => /\bnewJobId\b/.test(fs.readFileSync(f, 'utf8'))).map(rel), []);
  });

  it('views submit through the job service, never the core functions behind it', () => {
    const direct = /from '[^']*core\/jobs\/(submit|onboard|jobActions|personJobs)'/;
    assert.deepEqual(files.filter((f) => direct.test(fs.readFileSync(f, 'utf8'))).map(rel), []);
  });

  it('the Notifier submits, onboards, cancels and runs nothing: it only decides what to tell', () => {
    for (const file of ['window/notifications.ts', 'window/noticePolicy.ts']) {
      const text = fs.readFileSync(path.join(VIEWS, file), 'utf8');
      const acts = text.match(/\.(submit|onboard|cancel|verify|actAsPerson|create|resume|stop|send|run|start)\(/g) ?? [];
      assert.deepEqual(acts, [], `${file} acts`);
      assert.ok(!/jobToldByCaller|delegate\(/.test(text), `${file} has no delegation of its own`);
    }
  });
});
