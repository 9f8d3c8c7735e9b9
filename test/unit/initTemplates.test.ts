import { strict as assert } from 'node:assert';
import { parse as parseYaml } from 'yaml';
import { GLOBAL_OPTIONS } from '../../src/cli/args';
import { COMMANDS } from '../../src/cli/commands';
import { splitWords } from '../../src/core/base/shellWords';
import { parseEnvFile } from '../../src/core/config/envFile';
import { CONFIG_KEYS, resolveConfig } from '../../src/core/config/settings';
import { agentRules, agentRulesSection, appendSection, findSection, removeSection } from '../../src/core/init/agentRules';
import { envTemplate } from '../../src/core/init/envTemplate';
import { mamSkills, skillFile } from '../../src/core/init/skills';

const CLI = '/opt/mam "x"/dist/cli.js';
const WORKSPACE = '/home/me/project';

describe('what mam init installs', () => {
  it('every SKILL.md has the frontmatter Claude Code and Codex read: a name that is its folder, a one-line description', () => {
    for (const skill of mamSkills(CLI, WORKSPACE)) {
      const text = skillFile(skill);
      const m = /^---\n([\s\S]*?)\n---\n/.exec(text);
      assert.ok(m, `${skill.name}: frontmatter`);
      const front = parseYaml(m[1]!) as Record<string, unknown>;
      assert.deepEqual(Object.keys(front), ['name', 'description']);
      assert.equal(front.name, skill.name);
      assert.match(skill.name, /^[a-z0-9-]{1,64}$/);
      assert.equal(front.description, skill.description);
      assert.ok(skill.description.length <= 1024 && !skill.description.includes('\n'));
      assert.ok(text.length < 2600, `${skill.name} stays short (${text.length} characters)`);
    }
  });

  it('every command line in the skills is a real command with real options, run with the absolute CLI', () => {
    const prefix = 'node "/opt/mam \\"x\\"/dist/cli.js" ';
    let checked = 0;
    for (const skill of mamSkills(CLI, WORKSPACE)) {
      for (const line of skill.body.split('\n').filter((l) => l.includes('dist/cli.js'))) {
        for (const use of line.match(/node "(?:[^"\\]|\\.)*" [^`\n]*/g) ?? []) {
          assert.ok(use.startsWith(prefix), `${skill.name}: ${use}`);
          const words = splitWords(use.slice(prefix.length).replace(/<[^>]+>/g, 'X').replace(/#.*$/, ''));
          const command = [...COMMANDS].sort((a, b) => b.path.length - a.path.length).find((c) => c.path.every((p, i) => words[i] === p));
          assert.ok(command, `${skill.name}: no command for '${use}'`);
          for (const flag of words.filter((w) => w.startsWith('--')).map((w) => w.slice(2))) {
            assert.ok(flag in (command.options ?? {}) || flag in GLOBAL_OPTIONS, `${skill.name}: 'mam ${command.path.join(' ')}' has no --${flag}`);
          }
          checked++;
        }
      }
    }
    assert.ok(checked >= 25, `${checked} command lines checked`);
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

  it('the AGENTS.md section: between markers, never the line a job arrives as; appended and removed byte for byte', () => {
    const section = agentRulesSection(CLI);
    assert.equal(findSection(`a\n${section}\nb`)?.section, section);
    assert.ok(section.includes(agentRules(CLI)));
    assert.doesNotMatch(section, /MAM job (\S+): read the brief at (.+?) and follow it exactly\./);
    for (const original of ['', '# Rules', '# Rules\n', '# Rules\n\n', 'x\r\ny\r\n']) {
      const { text, separator } = appendSection(original, section);
      assert.ok(text.startsWith(original) && text.endsWith(`${section}\n`));
      assert.equal(removeSection(text, separator), original, JSON.stringify(original));
    }
  });
});
