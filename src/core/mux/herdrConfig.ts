import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse, stringify, TomlError } from 'smol-toml';
import { errorMessage, isErrnoException } from '../base/errors';

/** What a herdr server MAM starts runs with: the environment variable naming its config, or why it has none. */
export interface HerdrServerConfig {
  /** `HERDR_CONFIG_PATH` for the server; absent when no config could be written (restore stays on). */
  file?: string;
  /** Something the user should know (their config could not be read, or ours not written). */
  warning?: string;
}

/** herdr's own config: `HERDR_CONFIG_PATH`, else `$XDG_CONFIG_HOME/herdr/config.toml` (docs/herdr-socket-api.md §5). */
export function userHerdrConfig(env: NodeJS.ProcessEnv): string {
  if (env.HERDR_CONFIG_PATH) return env.HERDR_CONFIG_PATH;
  return path.join(env.XDG_CONFIG_HOME || path.join(env.HOME || '/', '.config'), 'herdr', 'config.toml');
}

/**
 * The seeds' rule for a server MAM starts: the user's herdr config plus `[session]
 * resume_agents_on_restore = false`, so that a restarted server never relaunches agents on its own
 * (without the flags MAM gives them, outside MAM's registry). The user's file is only read; the
 * server gets a copy beside its socket (`sessions/<name>/mam-config.toml`), written anew at every
 * start. A config that cannot be read or parsed is named, and the copy holds MAM's key alone;
 * only when the copy cannot be written does the server start with herdr's default (restore on).
 */
export function herdrServerConfig(sessionDir: string, env: NodeJS.ProcessEnv): HerdrServerConfig {
  const source = userHerdrConfig(env);
  let config: Record<string, unknown> = {};
  let warning: string | undefined;
  try {
    config = parse(fs.readFileSync(source, 'utf8'));
  } catch (err) {
    if (!(isErrnoException(err) && err.code === 'ENOENT')) {
      const why = err instanceof TomlError ? `it is not valid TOML (line ${err.line}, column ${err.column})` : `it cannot be read (${errorMessage(err)})`;
      warning = `your herdr config ${source} is left as it is and not used by the herdr server MAM starts: ${why}; that server gets only resume_agents_on_restore = false`;
    }
  }
  const session = config.session;
  if (session !== undefined && (typeof session !== 'object' || session === null || Array.isArray(session))) {
    warning = `'session' in your herdr config ${source} is not a table; the herdr server MAM starts gets [session] resume_agents_on_restore = false instead`;
  }
  config.session = { ...(typeof session === 'object' && session !== null && !Array.isArray(session) ? session : {}), resume_agents_on_restore: false };
  const file = path.join(sessionDir, 'mam-config.toml');
  try {
    fs.mkdirSync(sessionDir, { recursive: true, mode: 0o700 });
    const tmp = `${file}.${process.pid}.tmp`;
    fs.writeFileSync(tmp, `# Written by Multi-Agent Mux at each start of this herdr server: ${source}, with agents never\n# relaunched on restore. Edit ${source}, not this copy.\n${stringify(config)}\n`, { mode: 0o600 });
    fs.renameSync(tmp, file);
  } catch (err) {
    return { warning: `could not write ${file} (${errorMessage(err)}): the herdr server MAM starts keeps herdr's default and may relaunch agents when it restarts` };
  }
  return { file, ...(warning ? { warning } : {}) };
}
