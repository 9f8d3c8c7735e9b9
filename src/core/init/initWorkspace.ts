import * as fs from 'node:fs';
import * as path from 'node:path';
import type { EnclosingAgent } from '../sessions/enclosingAgent';
import { OrchestratorRegistry } from '../sessions/orchestrators';
import { withLock } from '../store/lock';
import { ControlPlanePaths } from '../store/paths';
import { writeFileAtomic } from '../store/atomicFile';
import { agentRules, agentRulesSection, appendSection, findSection, removeSection, replaceSection } from './agentRules';
import { envTemplate, legacySettings } from './envTemplate';
import { appendExclude, excludeFileOf, gitIgnores, removeExclude } from './gitExclude';
import { readManifest, sha256, writeManifest, type ManifestEntry } from './manifest';
import { mamSkills, skillFiles, SKILL_ROOTS } from './skills';
import { isErrnoException } from '../base/errors';
import { makeDirs, readText } from './initFiles';
import type { InitAction, InitItem } from './initItem';
import { installMcp, removeMcp } from './mcpRegistration';

export type InitMode = 'install' | 'update' | 'remove';

/** What happened to one path (initItem.ts). Only created, appended, updated and removed change anything. */
export type { InitAction, InitItem };

export type OrchestratorOutcome =
  | { registered: true; added: boolean; agent: string; conversation_id: string; how: string }
  | { registered: false; why: string };

export interface InitResult {
  workspace: string;
  mode: InitMode;
  cli: string;
  /** Whether anything in the workspace changed (the orchestrator registry included). */
  changed: boolean;
  items: InitItem[];
  /** null when nobody looked: with --remove, and in VS Code. */
  orchestrator: OrchestratorOutcome | null;
}

export interface InitOptions {
  workspace: string;
  /** The CLI the skills and AGENTS.md name: the one that runs init. */
  cliPath: string;
  mode: InitMode;
  /** The agent this runs under, to register as the orchestrator (the CLI looks; VS Code does not). */
  enclosingAgent?: EnclosingAgent;
}

/** What init installs: whole files, or its section of a file it shares with the user. */
interface Artifact {
  path: string;
  kind: 'file' | 'section';
  content: string;
  mode?: number;
  /** Said when it is created. */
  note?: string;
}

const ENV_FILE = '.mam.env';
const CHANGES: ReadonlySet<InitAction> = new Set(['created', 'appended', 'updated', 'removed']);
const EXCLUDE_BLOCK = `# Multi-Agent Mux (mam init): broker credentials stay out of git\n${ENV_FILE}\n`;

/**
 * Sets a workspace up for a MAM team (`mam init`, "MAM: Initialize Workspace"): `.mam/`, a commented
 * `.mam.env` kept out of git by info/exclude, the skills and AGENTS.md section agents read, MAM's
 * MCP server in each agent CLI's project config (mcpRegistration.ts), and the orchestrator's
 * registration. Idempotent; `update` refreshes what nobody edited since; `remove`
 * takes back exactly what was added and is unchanged. Never touches a file it did not write.
 */
export async function initWorkspace(options: InitOptions): Promise<InitResult> {
  const { workspace, cliPath: cli, mode } = options;
  const result: InitResult = { workspace, mode, cli, changed: false, items: [], orchestrator: null };
  const previous = readManifest(workspace);
  if (mode === 'remove' && !previous.manifest) {
    result.items.push({ path: '.mam/init.json', action: 'gone', note: previous.unreadable ? 'unreadable: nothing can be told apart as mam init’s, so nothing was removed' : 'mam init has not set up this workspace' });
    return result;
  }
  const paths = new ControlPlanePaths(workspace);
  const hadControlPlane = fs.existsSync(paths.dir);
  paths.ensureDir();
  if (!hadControlPlane) result.items.push({ path: '.mam/', action: 'created', note: 'ignores itself (.mam/.gitignore)' });
  if (previous.unreadable) result.items.push({ path: '.mam/init.json', action: 'kept', note: 'unreadable: every file already there is left as is' });

  await withLock(paths.lock('init'), async () => {
    const before = readManifest(workspace).manifest?.entries ?? [];
    const entries = sortEntries(mode === 'remove' ? await remove(workspace, before, result.items) : await install(workspace, cli, mode === 'update', before, result.items));
    if (JSON.stringify(entries) !== JSON.stringify(sortEntries(before))) writeManifest(workspace, cli, entries);
  });
  if (mode !== 'remove' && options.enclosingAgent) result.orchestrator = await registerOrchestrator(paths, options.enclosingAgent);
  result.changed = result.items.some((i) => CHANGES.has(i.action)) || (result.orchestrator?.registered === true && result.orchestrator.added);
  return result;
}

function artifacts(workspace: string, cli: string): Artifact[] {
  const skills = mamSkills(cli, workspace);
  return [
    envArtifact(workspace),
    ...SKILL_ROOTS.flatMap((root) => skills.flatMap((s) => skillFiles(s).map((f): Artifact => ({ path: `${root}/${s.name}/${f.path}`, kind: 'file', content: f.content })))),
    { path: 'AGENTS.md', kind: 'section', content: agentRulesSection(cli, skills.map((s) => s.name)) },
    { path: '.claude/rules/mam.md', kind: 'file', content: `${agentRules(cli, skills.map((s) => s.name))}\n`, note: 'the same rules, for Claude Code (which does not read AGENTS.md)' },
  ];
}

/**
 * `.mam.env`: the commented template, with the settings of a legacy `.env` (the seeds' installer
 * kept them there) carried over set; `.env` itself is never changed.
 */
function envArtifact(workspace: string): Artifact {
  const legacy = legacySettings(workspace);
  const carried = legacy ? [...legacy.values.keys()] : [];
  const notes = ['mode 0600', carried.length ? `${carried.join(', ')} taken from .env (left as is); the rest commented out` : 'every setting commented out'];
  if (legacy?.unreadable.length) notes.push(`could not read ${legacy.unreadable.join(', ')}: set ${legacy.unreadable.length === 1 ? 'it' : 'them'} here by hand`);
  return { path: ENV_FILE, kind: 'file', content: envTemplate(legacy?.values), mode: 0o600, note: notes.join('; ') };
}

async function install(workspace: string, cli: string, update: boolean, before: readonly ManifestEntry[], items: InitItem[]): Promise<ManifestEntry[]> {
  const entries: ManifestEntry[] = before.filter((e) => e.kind === 'dir');
  const exclude = await installExclude(workspace, before.find((e) => e.kind === 'exclude'));
  const list = artifacts(workspace, cli);
  for (const a of list) {
    const old = before.find((e): e is WrittenEntry => (e.kind === 'file' || e.kind === 'section') && e.path === a.path);
    const done = installOne(workspace, a, old, update);
    items.push(done.item);
    entries.push(...done.entries);
    if (a.path === ENV_FILE && exclude) {
      items.push(exclude.item);
      if (exclude.entry) entries.push(exclude.entry);
    }
  }
  // What an older MAM wrote and this one no longer does stays listed until --update takes it back.
  const current = new Set(list.map((a) => a.path));
  for (const e of before) {
    if ((e.kind !== 'file' && e.kind !== 'section') || current.has(e.path)) continue;
    const state = writtenState(workspace, e);
    if (state === 'as written' && !update) {
      items.push({ path: e.path, action: 'outdated', note: 'no longer installed: mam init --update removes it' });
      entries.push(e);
    } else {
      const done = takeBack(workspace, e, state);
      items.push(done.kept ? done.item : { ...done.item, note: done.item.note ? `${done.item.note}; no longer installed` : 'no longer installed' });
      if (done.kept) entries.push(e);
    }
  }
  entries.push(...installMcp(workspace, cli, update, before, items));
  return update ? removeEmptyDirs(workspace, entries) : entries;
}

/** Installs one artifact: creates it, leaves it, refreshes it (with `update`, when unedited), or keeps the user's. */
function installOne(workspace: string, a: Artifact, old: Extract<ManifestEntry, { sha256: string }> | undefined, update: boolean): { item: InitItem; entries: ManifestEntry[] } {
  const file = path.join(workspace, a.path);
  const disk = readText(file);
  const hash = sha256(a.content);
  const write = (text: string) => writeFileAtomic(file, text, a.mode !== undefined ? { mode: a.mode } : {});
  if (disk === undefined) {
    const dirs = makeDirs(workspace, path.posix.dirname(a.path));
    write(a.kind === 'file' ? a.content : `${a.content}\n`);
    const entry: ManifestEntry = a.kind === 'file' ? { kind: 'file', path: a.path, sha256: hash } : { kind: 'section', path: a.path, sha256: hash, separator: '', created_file: true };
    return { item: { path: a.path, action: 'created', ...(a.note ? { note: a.note } : {}) }, entries: [...dirs, entry] };
  }
  const section = a.kind === 'section' ? findSection(disk) : undefined;
  if (a.kind === 'section' && !section) {
    const appended = appendSection(disk, a.content);
    write(appended.text);
    return {
      item: { path: a.path, action: 'appended', note: 'MAM section between <!-- mam:begin --> and <!-- mam:end -->; the rest untouched' },
      entries: [{ kind: 'section', path: a.path, sha256: hash, separator: appended.separator, created_file: false }],
    };
  }
  const current = section ? section.section : disk;
  const what = a.kind === 'section' ? 'its MAM section' : 'it';
  const kept = old ? [old] : [];
  if (current === a.content) return { item: { path: a.path, action: 'unchanged', ...(old ? {} : { note: 'already there' }) }, entries: kept };
  if (!old || sha256(current) !== old.sha256) {
    const note = old ? `edited since mam init wrote ${what}; left as is` : `${a.kind === 'section' ? 'its MAM section was' : 'it was'} not written by mam init here; left as is`;
    return { item: { path: a.path, action: 'kept', note }, entries: kept };
  }
  if (!update) return { item: { path: a.path, action: 'outdated', note: `mam init --update refreshes ${what}` }, entries: kept };
  write(section ? replaceSection(disk, a.content) : a.content);
  return { item: { path: a.path, action: 'updated' }, entries: [{ ...old, sha256: hash }] };
}

/**
 * Keeps `.mam.env` out of git without touching the user's .gitignore: a line in git's per-clone
 * info/exclude, added only when git does not already ignore the file.
 */
async function installExclude(workspace: string, old: ManifestEntry | undefined): Promise<{ item: InitItem; entry?: ManifestEntry } | undefined> {
  const file = await excludeFileOf(workspace);
  if (!file) return undefined;
  const shown = displayPath(workspace, file);
  const stillThere = old?.kind === 'exclude' && readText(old.file)?.includes(old.text);
  if (stillThere) return { item: { path: shown, action: 'unchanged', note: `lists ${ENV_FILE}` }, entry: old };
  if (await gitIgnores(workspace, ENV_FILE)) return { item: { path: shown, action: 'unchanged', note: `git already ignores ${ENV_FILE}` } };
  appendExclude(file, EXCLUDE_BLOCK);
  return { item: { path: shown, action: 'appended', note: `lists ${ENV_FILE}: never committed, and your .gitignore is untouched` }, entry: { kind: 'exclude', file, text: EXCLUDE_BLOCK } };
}

async function remove(workspace: string, before: readonly ManifestEntry[], items: InitItem[]): Promise<ManifestEntry[]> {
  const kept: ManifestEntry[] = [];
  for (const e of before) {
    if (e.kind !== 'file' && e.kind !== 'section') continue;
    const done = takeBack(workspace, e, writtenState(workspace, e));
    items.push(done.item);
    if (done.kept) kept.push(e);
  }
  kept.push(...removeMcp(workspace, before, items));
  for (const e of before) {
    if (e.kind !== 'exclude') continue;
    if (fs.existsSync(path.join(workspace, ENV_FILE))) {
      kept.push(e);
      items.push({ path: displayPath(workspace, e.file), action: 'kept', note: `${ENV_FILE} is still here, so git keeps ignoring it` });
    } else if (removeExclude(e.file, e.text)) {
      items.push({ path: displayPath(workspace, e.file), action: 'removed', note: `the ${ENV_FILE} line` });
    }
  }
  return [...kept, ...removeEmptyDirs(workspace, before.filter((e) => e.kind === 'dir'))];
}

type WrittenEntry = Extract<ManifestEntry, { sha256: string }>;

/** Whether a file (or section) mam init wrote is still there as it wrote it. */
function writtenState(workspace: string, e: WrittenEntry): 'gone' | 'edited' | 'as written' {
  const disk = readText(path.join(workspace, e.path));
  const current = e.kind === 'file' ? disk : disk !== undefined ? findSection(disk)?.section : undefined;
  if (current === undefined) return 'gone';
  return sha256(current) === e.sha256 ? 'as written' : 'edited';
}

/** Removes a file (or section) mam init wrote, unless it was edited since; `kept`: it stays ours. */
function takeBack(workspace: string, e: WrittenEntry, state: ReturnType<typeof writtenState>): { item: InitItem; kept: boolean } {
  if (state === 'gone') return { item: { path: e.path, action: 'gone', note: 'already removed' }, kept: false };
  if (state === 'edited') return { item: { path: e.path, action: 'kept', note: `edited since mam init wrote ${e.kind === 'section' ? 'its MAM section' : 'it'}; left as is` }, kept: true };
  const file = path.join(workspace, e.path);
  if (e.kind === 'file') {
    fs.rmSync(file);
    return { item: { path: e.path, action: 'removed' }, kept: false };
  }
  const rest = removeSection(readText(file)!, e.separator);
  const whole = e.created_file && rest.trim() === '';
  if (whole) fs.rmSync(file);
  else writeFileAtomic(file, rest);
  return { item: { path: e.path, action: 'removed', ...(whole ? {} : { note: 'its MAM section; the rest kept' }) }, kept: false };
}

/**
 * Removes the folders mam init created that are now empty, deepest first: whatever else lives in
 * them stays, and so does their entry. Other entries pass through.
 */
function removeEmptyDirs(workspace: string, entries: readonly ManifestEntry[]): ManifestEntry[] {
  const dirs = entries.filter((e): e is Extract<ManifestEntry, { kind: 'dir' }> => e.kind === 'dir').sort((a, b) => b.path.length - a.path.length);
  const gone = new Set<ManifestEntry>();
  for (const d of dirs) {
    try {
      fs.rmdirSync(path.join(workspace, d.path));
      gone.add(d);
    } catch (err) {
      if (isErrnoException(err, 'ENOENT')) gone.add(d);
    }
  }
  return entries.filter((e) => !gone.has(e));
}

/** Records the agent this runs under as the orchestrator (`mam init`, and `mam mcp` for the client that started it); a MAM session is not one. */
export async function registerOrchestrator(paths: ControlPlanePaths, agent: EnclosingAgent): Promise<OrchestratorOutcome> {
  if (!agent.found) return { registered: false, why: agent.why };
  if (agent.mamSession) return { registered: false, why: `this runs in MAM session '${agent.mamSession}' (${agent.agent}), a sub-agent whose conversation is the session's` };
  const { added } = await new OrchestratorRegistry(paths).register(agent.agent, agent.conversationId);
  return { registered: true, added, agent: agent.agent, conversation_id: agent.conversationId, how: agent.how };
}

/** One order whatever order the entries were made in, so an unchanged manifest is never rewritten. */
function sortEntries(entries: readonly ManifestEntry[]): ManifestEntry[] {
  const key = (e: ManifestEntry) => `${e.kind}\u0000${e.kind === 'exclude' ? e.file : e.path}`;
  return [...entries].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
}

function displayPath(workspace: string, file: string): string {
  const rel = path.relative(workspace, file);
  return rel.startsWith('..') || path.isAbsolute(rel) ? file : rel.split(path.sep).join('/');
}
