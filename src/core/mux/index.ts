import { createHash } from 'node:crypto';
import * as path from 'node:path';
import { UsageError } from '../base/errors';
import { printable } from '../base/ids';
import type { Logger } from '../base/log';
import type { MuxKind } from '../store/sessionSchema';
import type { Multiplexer } from './multiplexer';
import { HerdrBackend } from './herdr';
import { TmuxBackend } from './tmux';

export type MuxFactory = (kind: MuxKind, server: string) => Multiplexer;

/** Builds the real backends, with the environment multiplexer commands run in; `logger` hears what a user should know. */
export function realMuxFactory(env: NodeJS.ProcessEnv, logger?: Pick<Logger, 'warn'>): MuxFactory {
  return (kind, server) => {
    return kind === 'tmux' ? new TmuxBackend({ server, env }) : new HerdrBackend({ session: server, env, ...(logger ? { warn: (m: string) => logger.warn(m) } : {}) });
  };
}

/**
 * The workspace's own server name: `mam-<folder>-<hash>`, readable in `tmux ls` and unique per
 * workspace path even when two projects share a folder name.
 */
export function defaultServerName(workspace: string): string {
  const slug = path.basename(workspace).toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 24) || 'ws';
  const hash = createHash('sha256').update(path.resolve(workspace)).digest('hex').slice(0, 6);
  return `mam-${slug}-${hash}`;
}

const SERVER_NAME = /^[A-Za-z0-9._-]{1,64}$/;

export function checkServerName(server: string): void {
  if (!SERVER_NAME.test(server) || server === '.' || server === '..') {
    throw new UsageError(`'${printable(server, 64)}' is not a usable server name; use letters, digits, '.', '_' and '-'`, 'bad_server');
  }
}

export { USERS_OWN_SERVER, isUsersOwnServer } from './multiplexer';
