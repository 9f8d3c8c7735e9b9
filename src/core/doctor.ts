import * as fs from 'node:fs';
import { errorMessage } from './base/errors';
import { exec, ProgramNotFoundError } from './base/exec';
import { MemoryLogger } from './base/log';
import { missingIgnores } from './config/gitignore';
import { resolveConfig, type ResolvedConfig } from './config/settings';
import { ControlPlane } from './store/controlPlane';
import { legacySettings } from './init/envTemplate';
import { networkFsTypeOf } from './store/mounts';

export interface DoctorCheck {
  name: string;
  ok: boolean;
  /** What was found, in plain words. */
  detail: string;
  /** What to do about a problem. */
  fix?: string;
  /** A finding worth knowing that is not a problem. */
  warning?: boolean;
}

export interface DoctorInput {
  workspace: string;
  env: NodeJS.ProcessEnv;
  settings?: Readonly<Record<string, unknown>>;
  /** In an untrusted workspace the doctor starts no program (tmux, git, herdr): it only reads files. */
  trusted?: boolean;
}

const MIN_NODE_MAJOR = 20;
const MIN_TMUX = [3, 0] as const;

/** Checks everything MAM depends on and says, for each problem, what to do. Changes nothing. */
export async function runDoctor(input: DoctorInput): Promise<DoctorCheck[]> {
  const checks: DoctorCheck[] = [];
  const trusted = input.trusted !== false;
  checks.push(checkNode());
  if (trusted) {
    checks.push(await checkTool('tmux', ['-V'], /tmux (?:next-)?(\d+)\.(\d+)/, MIN_TMUX, 'install tmux 3.0 or newer (apt-get install tmux, or brew install tmux)'));
    checks.push(await checkTool('git', ['--version'], /git version (\d+)\.(\d+)/, [2, 20], 'install git 2.20 or newer'));
  } else {
    checks.push({ name: 'trust', ok: true, warning: true, detail: 'this workspace is not trusted: tmux, git and the .gitignore were not checked (MAM runs no program here)', fix: 'trust the workspace to check them' });
  }

  let config: ResolvedConfig | undefined;
  try {
    config = resolveConfig({ workspace: input.workspace, env: input.env, settings: input.settings });
    const legacy = config.envFile ? undefined : legacySettings(input.workspace);
    checks.push(
      legacy?.values.size
        ? { name: 'settings', ok: true, warning: true, detail: `no .mam.env, and MAM does not read .env, which sets ${[...legacy.values.keys()].join(', ')}`, fix: 'run mam init: it carries them into a new .mam.env and leaves .env as it is' }
        : { name: 'settings', ok: true, detail: config.envFile ? `read ${config.envFile}` : 'no .mam.env; defaults and environment' },
    );
  } catch (err) {
    checks.push({ name: 'settings', ok: false, detail: errorMessage(err), fix: 'correct that line of .mam.env (or the variable named)' });
  }
  if (config) checks.push(checkBroker(config));
  if (trusted && config?.values.mux === 'herdr') {
    checks.push(await checkTool('herdr', ['--version'], /(\d+)\.(\d+)/, [0, 0], 'install herdr (https://herdr.dev), or set MAM_MUX=tmux'));
  }

  const paths = new ControlPlane(input.workspace, { logger: new MemoryLogger() }).paths;
  const fsType = networkFsTypeOf(paths.dir);
  if (fsType) {
    checks.push({ name: 'filesystem', ok: true, warning: true, detail: `.mam/ is on a network filesystem (${fsType})`, fix: 'it works, with directory locks; keep one host writing at a time' });
  }
  checks.push(await checkRegistry(input.workspace));
  checks.push(checkJobs(input.workspace));
  if (trusted) checks.push(await checkGitignore(input.workspace));
  return checks;
}

function checkNode(): DoctorCheck {
  const major = Number(process.versions.node.split('.')[0]);
  return major >= MIN_NODE_MAJOR
    ? { name: 'node', ok: true, detail: `Node.js ${process.versions.node}` }
    : { name: 'node', ok: false, detail: `Node.js ${process.versions.node} is too old`, fix: `install Node.js ${MIN_NODE_MAJOR} or newer` };
}

async function checkTool(tool: string, args: string[], pattern: RegExp, min: readonly [number, number], fix: string): Promise<DoctorCheck> {
  try {
    const result = await exec(tool, args, { timeoutMs: 10_000 });
    const text = (result.stdout + result.stderr).trim();
    const m = pattern.exec(text);
    if (!m) return { name: tool, ok: false, detail: `could not read the version from '${text.split('\n')[0]}'`, fix };
    const [major, minor] = [Number(m[1]), Number(m[2])];
    const recent = major > min[0] || (major === min[0] && minor >= min[1]);
    return recent ? { name: tool, ok: true, detail: text.split('\n')[0]! } : { name: tool, ok: false, detail: `${text.split('\n')[0]} is too old`, fix };
  } catch (err) {
    if (err instanceof ProgramNotFoundError) return { name: tool, ok: false, detail: `${tool} is not installed`, fix };
    return { name: tool, ok: false, detail: `${tool} failed to run: ${errorMessage(err)}`, fix };
  }
}

function checkBroker(config: ResolvedConfig): DoctorCheck {
  const v = config.values;
  if (v.brokerHost === '') {
    return { name: 'broker', ok: true, detail: 'embedded broker (started on demand on 127.0.0.1; set MQTT_BROKER to use your own)' };
  }
  if (v.brokerCa !== '' && !fs.existsSync(v.brokerCa)) {
    return { name: 'broker', ok: false, detail: `MQTT_CA names ${v.brokerCa}, which does not exist`, fix: 'point MQTT_CA at the broker\'s CA certificate, or unset it' };
  }
  if (v.brokerPassword !== '' && v.brokerUsername === '') {
    return { name: 'broker', ok: false, detail: 'MQTT_PASSWORD is set without MQTT_USERNAME', fix: 'set MQTT_USERNAME too, or unset MQTT_PASSWORD' };
  }
  const port = v.brokerPort || (v.brokerTls ? 8883 : 1883);
  const auth = v.brokerUsername ? `as ${v.brokerUsername}` : 'without a user name';
  return { name: 'broker', ok: true, detail: `external broker ${v.brokerHost}:${port}${v.brokerTls ? ' over TLS' : ''}, ${auth} (from ${config.sources.brokerHost})` };
}

async function checkRegistry(workspace: string): Promise<DoctorCheck> {
  const logger = new MemoryLogger();
  const cp = new ControlPlane(workspace, { logger, lockTimeoutMs: 5_000 });
  if (!fs.existsSync(cp.paths.dir)) {
    return { name: 'registry', ok: true, detail: `no .mam/ folder yet in ${workspace}; it is created on first use` };
  }
  try {
    const snapshot = await cp.sessions.load();
    const repaired = logger.messages('warn');
    const detail = `${snapshot.sessions.length} session(s), revision ${snapshot.revision}`;
    return repaired.length > 0
      ? { name: 'registry', ok: true, warning: true, detail: `${detail}; repaired: ${repaired.join('; ')}` }
      : { name: 'registry', ok: true, detail };
  } catch (err) {
    return { name: 'registry', ok: false, detail: errorMessage(err), fix: 'see the message; the corrupt file can be moved aside to start afresh' };
  }
}

function checkJobs(workspace: string): DoctorCheck {
  const cp = new ControlPlane(workspace, { logger: new MemoryLogger() });
  const { jobs, unreadable } = cp.jobs.list();
  if (unreadable.length > 0) {
    return {
      name: 'jobs',
      ok: false,
      detail: `${unreadable.length} unreadable job record(s): ${unreadable.slice(0, 3).map((u) => `${u.file} (${u.why})`).join('; ')}`,
      fix: `move them out of ${cp.paths.jobsDir}`,
    };
  }
  const open = jobs.filter((j) => !['completed', 'failed', 'timeout', 'cancelled'].includes(j.state)).length;
  return { name: 'jobs', ok: true, detail: `${jobs.length} job(s), ${open} open` };
}

async function checkGitignore(workspace: string): Promise<DoctorCheck> {
  const missing = await missingIgnores(workspace);
  if (missing === undefined) return { name: '.gitignore', ok: true, detail: 'not a git checkout' };
  return missing.length === 0
    ? { name: '.gitignore', ok: true, detail: '.mam/ and .mam.env are ignored' }
    : { name: '.gitignore', ok: true, warning: true, detail: `${missing.join(' and ')} not ignored by git`, fix: `add ${missing.join(' and ')} to .gitignore so agent state and credentials stay out of commits (in VS Code: MAM: Add .mam to .gitignore)` };
}
