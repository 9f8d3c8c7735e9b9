import type { OptionSpecs } from '../cli/args';

/** `mam mcp`'s own flags (beside --workspace and --help, which every command takes). */
export const MCP_OPTIONS = {
  untrusted: { kind: 'boolean', description: 'the client serves a folder it does not trust: answer reads only, refuse every tool that acts' },
} as const satisfies OptionSpecs;
