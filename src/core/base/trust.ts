import { ExitCode, MamError } from './errors';

/**
 * Whether the folder's own files may make MAM act: start agents, brokers and git, type into panes.
 * An untrusted workspace (VS Code's Restricted Mode) is inert: every service that would act asks
 * its trust first, so no caller can forget to. The CLI is run by the user in the folder: trusted.
 */
export interface Trust {
  readonly trusted: boolean;
  /** Throws UntrustedWorkspaceError (exit 64) naming `what` in an untrusted workspace. */
  require(what: string): void;
}

export class UntrustedWorkspaceError extends MamError {
  constructor(message: string) {
    super(message, 'untrusted', ExitCode.usage);
  }
}

export function trustOf(trusted: boolean): Trust {
  return {
    trusted,
    require(what) {
      if (!trusted) throw new UntrustedWorkspaceError(`this workspace is not trusted: MAM does not ${what} here; trust the workspace to use it`);
    },
  };
}

export const TRUSTED: Trust = trustOf(true);
