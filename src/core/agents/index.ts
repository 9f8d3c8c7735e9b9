import { UsageError } from '../base/errors';
import { printable } from '../base/ids';
import { AGENT_NAMES, type AgentAdapter, type AgentName } from './adapter';
import { agy } from './agy';
import { claude } from './claude';
import { codex } from './codex';
import { copilot } from './copilot';
import { gemini } from './gemini';
import { grok } from './grok';
import { hermes } from './hermes';
import { opencode } from './opencode';
import { qwen } from './qwen';
import { shell } from './shell';
import { isOneOf } from '../base/schema';

const ADAPTERS: Record<AgentName, AgentAdapter> = { claude, codex, gemini, opencode, copilot, qwen, hermes, grok, agy, shell };

export function isAgentName(name: string): name is AgentName {
  return isOneOf(AGENT_NAMES, name);
}

/** The adapter for `name`; an unknown agent is a usage error listing the known ones. */
export function adapterFor(name: string): AgentAdapter {
  if (!isAgentName(name)) throw new UsageError(`unknown agent '${printable(name, 40)}'; choose one of ${AGENT_NAMES.join(', ')}`, 'unknown_agent');
  return ADAPTERS[name];
}

export { AGENT_NAMES, type AgentAdapter, type AgentName } from './adapter';
