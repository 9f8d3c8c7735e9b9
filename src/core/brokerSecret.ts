import type { Logger } from './base/log';
import { resolveConfig } from './config/settings';
import { externalBroker } from './messaging/brokerEndpoint';

/** A broker password as VS Code keeps it: bound to the broker address it was entered for. */
export interface BrokerSecret {
  /** `mam.broker.host` as it was when the password was saved (a host, or mqtt[s]://host:port). */
  host: string;
  /** `mam.broker.port` then (0: the default for the scheme). */
  port: number;
  password: string;
}

/** What the check needs of the engine's options. */
export interface BrokerSecretContext {
  workspace: string;
  env: NodeJS.ProcessEnv;
  settings: Readonly<Record<string, unknown>>;
  brokerSecret?: BrokerSecret | undefined;
  trusted: boolean;
  logger: Logger;
}

/** `{ 'broker.password': … }` when the secret belongs to the broker this folder would use, else nothing. */
export function brokerSecretSettings(options: BrokerSecretContext): Record<string, string> {
  const secret = options.brokerSecret;
  if (!secret || !options.trusted) return {};
  try {
    const here = externalBroker(resolveConfig({ workspace: options.workspace, env: options.env, settings: options.settings }));
    const saved = externalBroker(resolveConfig({ workspace: options.workspace, env: {}, settings: { 'broker.host': secret.host, 'broker.port': secret.port }, readEnvFile: false }));
    if (!here || !saved || here.host.toLowerCase() !== saved.host.toLowerCase() || here.port !== saved.port) {
      if (here) options.logger.warn(`the saved broker password is for ${saved ? `${saved.host}:${saved.port}` : 'another broker'}, not ${here.host}:${here.port}; it is not used here (MAM: Configure Broker… saves one for this broker)`);
      return {};
    }
    return { 'broker.password': secret.password };
  } catch {
    return {}; // a malformed setting: the engine reports it when it resolves its config
  }
}
