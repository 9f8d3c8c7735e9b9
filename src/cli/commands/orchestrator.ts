import { AGENT_NAMES } from '../../core/agents';
import { SessionService } from '../../core/sessions/sessionService';
import { defineCommand, JSON_OPTION, type Command } from '../command';

const register = defineCommand({
  path: ['orchestrator', 'register'],
  summary: 'record your own conversation ID so discovery never takes it for a sub-agent’s',
  options: {
    agent: { kind: 'string', value: 'AGENT', required: true, description: `the orchestrator’s agent: ${AGENT_NAMES.join(', ')}` },
    conversation: { kind: 'string', value: 'ID', required: true, description: 'its conversation (session) ID' },
    ...JSON_OPTION,
  },
  async run(ctx) {
    const service: SessionService = ctx.sessions();
    const { entry, added } = await service.orchestrators.register(ctx.args.options.agent, ctx.args.options.conversation);
    if (ctx.args.options.json) ctx.json({ ...entry, added });
    else ctx.out(added ? `Registered ${entry.agent} conversation ${entry.conversation_id} as the orchestrator's.` : `Already registered: ${entry.agent} conversation ${entry.conversation_id}.`);
    return 0;
  },
});

export const orchestratorCommands: readonly Command[] = [register];
