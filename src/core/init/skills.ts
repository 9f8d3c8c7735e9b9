import { version } from '../../../package.json';
import { jobSkills } from './jobSkills';
import { planSkills } from './planSkills';
import { reviewSkills } from './reviewSkills';
import { sessionSkills } from './sessionSkills';
import { skillText, type Skill, type SkillFile } from './skillText';

export type { Skill, SkillFile };

/** Where the agents look for a workspace's skills: Codex (and the open standard), Claude Code. */
export const SKILL_ROOTS = ['.agents/skills', '.claude/skills'] as const;

/**
 * The frontmatter the seeds' skills carry beside name and description. Platforms as they are:
 * MAM needs tmux (or herdr), so Linux and macOS (where /proc is missing it falls back, see
 * README "Limits"), never Windows. `compatibility` is the open standard's field for the same.
 */
export const SKILL_META = {
  version,
  author: 'Multi-Agent Mux',
  license: 'MIT',
  platforms: ['linux', 'macos'],
  environments: ['terminal', 'tmux', 'herdr'],
  compatibility: 'Linux or macOS (not Windows) with tmux 3.2+ (or herdr), git and Node.js 20+; runs the mam CLI this file names.',
} as const;

/**
 * The skills an orchestrating agent needs to run a MAM team — the seeds' eight in seven (create,
 * stop, resume and status are mam-sessions), and plans — every command spelled out with `cli` (the
 * absolute path of the bundled CLI), so no install or PATH is needed.
 */
export function mamSkills(cli: string, workspace: string): Skill[] {
  const t = skillText(cli, workspace);
  return [...sessionSkills(t), ...jobSkills(t), ...reviewSkills(t), ...planSkills(t)];
}

/** SKILL.md: the YAML frontmatter, then the body. */
export function skillFile(skill: Skill): string {
  const list = (items: readonly string[]) => `[${items.join(', ')}]`;
  const front = [
    `name: ${skill.name}`,
    `description: ${JSON.stringify(skill.description)}`,
    `version: ${SKILL_META.version}`,
    `author: ${SKILL_META.author}`,
    `license: ${SKILL_META.license}`,
    `platforms: ${list(SKILL_META.platforms)}`,
    `environments: ${list(SKILL_META.environments)}`,
    `compatibility: ${JSON.stringify(SKILL_META.compatibility)}`,
    'metadata:',
    '  hermes:',
    `    tags: ${list(skill.tags)}`,
    `    related_skills: ${list(skill.related)}`,
    `    prereq_skills: ${list(skill.prereq)}`,
  ];
  return `---\n${front.join('\n')}\n---\n\n${skill.body}`;
}

/** Every file of a skill, relative to its folder: SKILL.md first. */
export function skillFiles(skill: Skill): SkillFile[] {
  return [{ path: 'SKILL.md', content: skillFile(skill) }, ...(skill.files ?? [])];
}
