/**
 * The MCP SDK's own client, talking to `node dist/cli.js mcp` over stdio as an agent CLI would:
 * every answer it gets is kept, so a test can check afterwards that none held a secret.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult, Progress } from '@modelcontextprotocol/sdk/types.js';
import { CLI } from './helpers';

export interface ToolAnswer {
  isError: boolean;
  text: string;
  data: Record<string, unknown>;
}

export interface CallOptions {
  onprogress?: (progress: Progress) => void;
  signal?: AbortSignal;
  /** The request's own bound (the SDK's default is 60 s). */
  timeoutMs?: number;
}

export interface McpConnection {
  client: Client;
  /** Calls a tool; resolves with its answer (an isError answer too). */
  call(name: string, args?: Record<string, unknown>, options?: CallOptions): Promise<ToolAnswer>;
  /** Every answer so far, as the JSON the server sent (tool results, resources, progress messages). */
  readonly seen: string[];
  /** What the server wrote to stderr. */
  stderr(): string;
  close(): Promise<void>;
}

/** Starts `mam mcp` (with `args`) in `cwd` and connects the SDK's client to it. */
export async function connectMcp(options: { cwd: string; env: NodeJS.ProcessEnv; args?: string[] }): Promise<McpConnection> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(options.env)) if (v !== undefined) env[k] = v;
  const transport = new StdioClientTransport({ command: process.execPath, args: [CLI, 'mcp', ...(options.args ?? [])], cwd: options.cwd, env, stderr: 'pipe' });
  let stderr = '';
  transport.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const client = new Client({ name: 'mam-test', version: '1.0.0' });
  await client.connect(transport);
  const seen: string[] = [];
  return {
    client,
    seen,
    async call(name, args = {}, o = {}) {
      const result = (await client.callTool({ name, arguments: args }, undefined, {
        ...(o.signal ? { signal: o.signal } : {}),
        timeout: o.timeoutMs ?? 120_000,
        onprogress: (p) => {
          seen.push(JSON.stringify(p));
          o.onprogress?.(p);
        },
      })) as CallToolResult;
      seen.push(JSON.stringify(result));
      const text = result.content.map((c) => (c.type === 'text' ? c.text : '')).join('');
      return { isError: result.isError === true, text, data: result.structuredContent ?? {} };
    },
    stderr: () => stderr,
    async close() {
      await client.close();
    },
  };
}
