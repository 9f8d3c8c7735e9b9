import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { version } from '../../package.json';
import { GLOBAL_OPTIONS } from '../../src/cli/args';
import type { Command } from '../../src/cli/command';
import { COMMANDS } from '../../src/cli/commands';
import { splitWords } from '../../src/core/base/shellWords';
import { parseEnvFile } from '../../src/core/config/envFile';
import { CONFIG_KEYS, resolveConfig } from '../../src/core/config/settings';
import { agentRules, agentRulesSection, appendSection, findSection, removeSection } from '../../src/core/init/agentRules';
import { envTemplate } from '../../src/core/init/envTemplate';
import { mamSkills, skillFile, skillFiles, type Skill } from '../../src/core/init/skills';
import { EVENT_NAMES } from '../../src/core/messaging/protocol';
import { CLI, REPO_ROOT } from '../support/helpers';

const INSTALLED_CLI = '/opt/mam "x"/dist/cli.js';
const WORKSPACE = '/home/me/project';
const SKILLS = mamSkills(INSTALLED_CLI, WORKSPACE);
const NAMES = SKILLS.map((s) => s.name);
const FRONTMATTER = /^---\n([\s\S]*?)\n---\n/;

/**
 * Seed 004's `multi-agent-mux-delegate-job` (its SKILL.md, "Core Commands"), which the package
 * installs beside `mam` as dist/delegate-job.js: its subcommands (their flags are asked of its own
 * `--help`).
 */
const SEED_DELEGATE: Record<string, readonly string[]> = {
  submit: ['agent', 'agent-session', 'prompt', 'role', 'timeout', 'idle-timeout', 'type', 'reviewer', 'reviewer-session'],
  status: ['job'],
  logs: [],
  list: [],
  verify: ['job', 'validate'],
};

/** Every file a skill installs, with the `node "…"` command lines in it. */
function commandLines(skill: Skill): Array<{ file: string; line: string }> {
  return skillFiles(skill).flatMap((f) =>
    f.content
      .split('\n')
      .flatMap((l) => l.match(/node "(?:[^"\\]|\\.)*" [^`\n]*/g) ?? [])
      .map((line) => ({ file: `${skill.name}/${f.path}`, line })),
  );
}

/** The words of a command line, placeholders filled, shell redirections and comments left out. */
function wordsOf(rest: string): string[] {
  return splitWords(rest.replace(/<[^>]+>/g, 'X').replace(/\s(?:\d?>|&).*$/, '').replace(/#.*$/, ''));
}

const flagsOf = (words: string[]) => words.filter((w) => w.startsWith('--')).map((w) => w.slice(2));
const optionNames = (c: Command) => Object.entries({ ...GLOBAL_OPTIONS, ...(c.options ?? {}) }).flatMap(([n, spec]) => [n, ...((spec as { aliases?: string[] }).aliases ?? [])]);
const helpFlags = (args: string[]) => new Set([...execFileSync(process.execPath, args, { encoding: 'utf8' }).matchAll(/--([a-z][a-z-]*)/g)].map((m) => m[1]!));

describe('what mam init installs', () => {
  it('every SKILL.md carries the seeds’ frontmatter, and Claude Code’s and Codex’s own: a name that is its folder, a one-line description', () => {
    for (const skill of SKILLS) {
      const m = FRONTMATTER.exec(skillFile(skill));
      assert.ok(m, `${skill.name}: frontmatter`);
      const front = parseYaml(m[1]!) as Record<string, unknown>;
      assert.deepEqual(Object.keys(front), ['name', 'description', 'version', 'author', 'license', 'platforms', 'environments', 'compatibility', 'metadata'], skill.name);
      assert.equal(front.name, skill.name);
      assert.match(skill.name, /^[a-z0-9]+(-[a-z0-9]+)*$/);
      assert.ok(skill.name.length <= 64);
      assert.equal(front.description, skill.description);
      assert.ok(skill.description.length <= 1024 && !skill.description.includes('\n'));
      assert.equal(front.version, version, 'the package version, as a string');
      assert.equal(front.license, 'MIT');
      assert.equal(typeof front.author, 'string');
      assert.deepEqual(front.environments, ['terminal', 'tmux', 'herdr']);
      assert.ok(typeof front.compatibility === 'string' && front.compatibility.length <= 500, 'the open standard’s limit');
      const hermes = (front.metadata as { hermes: Record<string, unknown> }).hermes;
      assert.deepEqual(Object.keys(hermes), ['tags', 'related_skills', 'prereq_skills']);
      assert.ok(Array.isArray(hermes.tags) && hermes.tags.length > 0 && hermes.tags.every((t) => typeof t === 'string'));
      for (const key of ['related_skills', 'prereq_skills'] as const) {
        const named = hermes[key] as string[];
        assert.ok(named.every((n) => NAMES.includes(n) && n !== skill.name), `${skill.name} ${key}: ${named.join(', ')} are other installed skills`);
      }
    }
  });

  it('platforms as they are: Linux and macOS, never Windows (tmux)', () => {
    assert.match(fs.readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8'), /Windows is not supported \(tmux\)/);
    for (const skill of SKILLS) {
      const front = parseYaml(FRONTMATTER.exec(skillFile(skill))![1]!) as { platforms: string[]; compatibility: string };
      assert.deepEqual(front.platforms, ['linux', 'macos'], skill.name);
      assert.match(front.compatibility, /not Windows/);
    }
  });

  it('the seeds’ eight skills, in seven: sessions (create, stop, resume, status), monitor, jobs, loop, the orchestrator; worktrees, remote runners and plans beside', () => {
    assert.deepEqual([...NAMES].sort(), ['mam-jobs', 'mam-loop', 'mam-monitor', 'mam-orchestrator', 'mam-plans', 'mam-remote', 'mam-sessions', 'mam-worktrees']);
    const text = (name: string) => skillFiles(SKILLS.find((s) => s.name === name)!).map((f) => f.content).join('\n');
    for (const [name, words] of Object.entries({
      'mam-sessions': ['session create', '--onboard', 'Exit 44', '45', 'session stop', '--purge-conversation --yes', 'cannot be undone', 'session resume', 'resume --all', 'session status', 'pane_gone'],
      'mam-monitor': ['monitor --once', 'session monitor', 'terminated', 'registered', 'kill', 'SIGTERM'],
      'mam-orchestrator': ['orchestrator register --agent', '--conversation', ' init --json', 'CLAUDE_CODE_SESSION_ID', 'CODEX_THREAD_ID', 'purge'],
      'mam-jobs': ['job wait', '--any', '75', 'job logs <id> --pane', 'pane.txt', '--agent human --agent-session', 'delegate-job.js', '--event <name>', 'references/job-types.md'],
      'mam-plans': ['plan run <file>', 'plan status <plan-id>', 'plan list', 'plan resume <plan-id>', 'plan cancel <plan-id>', 'plan draft --goal', 'needs', 'human:NAME', '{ agent: shell, command:', 'max_parallel', 'budget_exceeded', 'write a plan and let MAM run it', 'exits 64'],
    })) {
      for (const w of words) assert.ok(text(name).includes(w), `${name} teaches ${w}`);
    }
  });

  it('the job types reference sits beside mam-jobs: direct, loop and discuss with their command lines, states and exit codes', () => {
    const jobs = SKILLS.find((s) => s.name === 'mam-jobs')!;
    assert.deepEqual(skillFiles(jobs).map((f) => f.path), ['SKILL.md', 'references/job-types.md']);
    const ref = jobs.files![0]!.content;
    for (const w of ['## direct', '## loop', '## discuss', '--type loop --reviewer', '--max-iter', '--type discuss --with', '--max-turns', '[VERDICT: PASS]', '[AGREE]', 'max_iterations', 'no_agreement', 'registered', 'dispatched', 'started', 'completed', 'failed', 'timeout', 'cancelled', 'exit 0', 'exit 1', 'exit 2', 'exit 5']) {
      assert.ok(ref.includes(w), `job-types.md: ${w}`);
    }
    assert.ok(!SKILLS.some((s) => s !== jobs && s.files?.length), 'only mam-jobs has extra files');
  });

  it('every command line a skill names is a real command with real options, run with the absolute CLI (and the seeds’ delegate-job beside it)', () => {
    const mamPrefix = 'node "/opt/mam \\"x\\"/dist/cli.js" ';
    const delegatePrefix = 'node "/opt/mam \\"x\\"/dist/delegate-job.js" ';
    const eventFlags = helpFlags([CLI, 'event', '--help']);
    const delegateJs = path.join(path.dirname(CLI), 'delegate-job.js');
    const byLength = [...COMMANDS].sort((a, b) => b.path.length - a.path.length);
    let checked = 0;
    for (const skill of SKILLS) {
      for (const { file, line } of commandLines(skill)) {
        const where = `${file}: ${line}`;
        checked++;
        if (line.startsWith(delegatePrefix)) {
          const [sub, ...rest] = wordsOf(line.slice(delegatePrefix.length));
          const known = helpFlags([delegateJs, sub!, '--help']);
          assert.ok(sub! in SEED_DELEGATE, `${where}: seed 004 has no subcommand ${sub}`);
          for (const flag of flagsOf(rest)) assert.ok(known.has(flag), `${where}: no --${flag}`);
          continue;
        }
        assert.ok(line.startsWith(mamPrefix), `${where}: runs the installed CLI by its absolute path`);
        const words = wordsOf(line.slice(mamPrefix.length));
        if (words[0] === 'event') {
          const named = words[1]!.startsWith('--') ? words[words.indexOf('--event') + 1] : words[1];
          assert.ok((EVENT_NAMES as readonly string[]).includes(named!), `${where}: event ${named}`);
          for (const flag of flagsOf(words)) assert.ok(eventFlags.has(flag), `${where}: mam event has no --${flag}`);
          continue;
        }
        const command = byLength.find((c) => c.path.every((p, i) => words[i] === p));
        assert.ok(command, `${where}: no such command`);
        const known = optionNames(command);
        for (const flag of flagsOf(words)) assert.ok(known.includes(flag), `${where}: 'mam ${command.path.join(' ')}' has no --${flag}`);
      }
    }
    assert.ok(checked >= 55, `${checked} command lines checked`);
  });

  it('mam-jobs: its first line holding " job submit " is the plain delegation (the line an agent takes), frontmatter included', () => {
    const text = skillFile(SKILLS.find((s) => s.name === 'mam-jobs')!);
    const first = text.split('\n').find((l) => l.includes(' job submit '));
    assert.equal(first, 'node "/opt/mam \\"x\\"/dist/cli.js" job submit --session <session> --prompt "<task>" --json');
  });

  it('SKILL.md files at the seeds’ depth, not beyond it (seed 004’s own is 8.2 KB)', () => {
    for (const skill of SKILLS) for (const f of skillFiles(skill)) assert.ok(f.content.length < 8000, `${skill.name}/${f.path}: ${f.content.length} characters`);
  });

  it('.mam.env: every setting MAM reads, commented out at its default; uncommenting them all changes nothing', () => {
    const text = envTemplate();
    const uncommented = text.split('\n').map((l) => l.replace(/^# (?=[A-Z][A-Z0-9_]*=)/, '')).join('\n');
    const values = parseEnvFile(uncommented);
    for (const spec of Object.values(CONFIG_KEYS)) assert.ok(values.has(spec.env), `${spec.env} is in the template`);
    assert.ok(values.has('MAM_AGENT_ARGS_CODEX') && values.has('MAM_AGENT_COMMAND_CLAUDE'));
    assert.equal(parseEnvFile(text).size, 0, 'as written, it sets nothing');
    const resolved = resolveConfig({ workspace: '/nowhere', env: {}, readEnvFile: false });
    const fromTemplate = resolveConfig({ workspace: '/nowhere', env: Object.fromEntries(values), readEnvFile: false });
    assert.deepEqual(fromTemplate.values, resolved.values);
    assert.deepEqual(Object.keys(fromTemplate.agents).sort(), ['agy', 'claude', 'codex', 'copilot', 'gemini', 'grok', 'hermes', 'opencode', 'qwen']);
  });

  it('the rules: the seeds’ roles, workflow and rules, every installed skill named', () => {
    const rules = agentRules(INSTALLED_CLI, NAMES);
    for (const w of [
      'Orchestrator (Delegator)', 'project manager (PM)', 'Worker (Implementer)', '**Reviewer**', '**Planner**', '### Workflow',
      'No change to core logic without a reviewed diff', 'review loop passed', 'One job per session', "Never type into another agent's pane",
      'ASCII', 'brief file', 'Pane snapshot rule', 'job logs <id> --pane', 'Review snapshot rule', '[VERDICT: PASS]',
      'Several dependent changes: a plan', '`plan run`', '`mam-plans`',
    ]) {
      assert.ok(rules.includes(w), `the rules say ${w}`);
    }
    for (const name of NAMES) assert.ok(rules.includes(`\`${name}\``), `the rules name ${name}`);
  });

  it('the AGENTS.md section: between markers, never the line a job arrives as; appended and removed byte for byte', () => {
    const section = agentRulesSection(INSTALLED_CLI, NAMES);
    assert.equal(findSection(`a\n${section}\nb`)?.section, section);
    assert.ok(section.includes(agentRules(INSTALLED_CLI, NAMES)));
    assert.doesNotMatch(section, /MAM job (\S+): read the brief at (.+?) and follow it exactly\./);
    for (const original of ['', '# Rules', '# Rules\n', '# Rules\n\n', 'x\r\ny\r\n']) {
      const { text, separator } = appendSection(original, section);
      assert.ok(text.startsWith(original) && text.endsWith(`${section}\n`));
      assert.equal(removeSection(text, separator), original, JSON.stringify(original));
    }
  });
});
