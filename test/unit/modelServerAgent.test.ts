/**
 * The scripted agent of the test model server (test/fixtures/model-server/agent.js): what it does
 * when a CLI's shell tool loses the output of its read of the brief.
 */
import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { REPO_ROOT } from '../support/helpers';

const agent = require(path.join(REPO_ROOT, 'test/fixtures/model-server/agent.js')) as {
  decide(config: object, items: object[], hasTools: boolean, agent: string): { cmd?: string; text?: string; why: string; reads?: number };
};

const JOB = 'j-20261204T205133Z-e1dd2af8';
const BRIEF = '/w/.mam/jobs/brief.md';
const READ = `cat '${BRIEF}'`;
const BRIEF_TEXT = ['# Job', '```sh', `node "/cli.js" event started --job ${JOB} --detail "…"`, `node "/cli.js" event completed --job ${JOB} --detail "…"`, '```'].join('\n');

/** The conversation: the job line, then each command the agent had run with its output. */
function conversation(outputs: string[], cmds: string[], said = `MAM job ${JOB}: read the brief at ${BRIEF} and follow it exactly.`) {
  const items: object[] = [{ kind: 'user', text: said }];
  outputs.forEach((text, i) => items.push({ kind: 'call', id: `c${i}`, name: 'run_shell_command', args: { command: cmds[i] } }, { kind: 'result', id: `c${i}`, text }));
  return items;
}

describe('the model server’s scripted agent', () => {
  it('reads the brief again when a read comes back without its event commands, then goes by the read that has them', () => {
    let d = agent.decide({}, conversation([''], [READ]), true, 'gemini');
    assert.equal(d.cmd, READ, 'an empty read is read again');
    d = agent.decide({}, conversation(['', BRIEF_TEXT], [READ, READ]), true, 'gemini');
    assert.equal(d.cmd, `node "/cli.js" event started --job ${JOB} --detail "…"`);
    assert.equal(d.reads, 2);
    d = agent.decide({}, conversation(['', BRIEF_TEXT, 'event started (seq 1)'], [READ, READ, d.cmd!]), true, 'gemini');
    assert.match(d.cmd ?? '', / event completed --job /);
  });

  it('stops after three reads without them, and says so', () => {
    const d = agent.decide({}, conversation(['', 'no commands here', ''], [READ, READ, READ]), true, 'gemini');
    assert.equal(d.cmd, undefined);
    assert.match(d.text ?? '', /has no event commands I can run/);
  });

  it('reads a skill again the same way before it delegates', () => {
    const said = "Use the mam-delegate skill at /w/.claude/skills/mam-delegate/SKILL.md to delegate 'add a test' to session worker.";
    const skillRead = "cat '/w/.claude/skills/mam-delegate/SKILL.md'";
    const skill = ['# Delegate', '```sh', 'mam job submit --session <session> --prompt <task> --json', '```'].join('\n');
    let d = agent.decide({}, conversation([''], [skillRead], said), true, 'qwen');
    assert.equal(d.cmd, skillRead);
    d = agent.decide({}, conversation(['', skill], [skillRead, skillRead], said), true, 'qwen');
    assert.equal(d.cmd, "mam job submit --session 'worker' --prompt 'add a test' --json");
  });
});
