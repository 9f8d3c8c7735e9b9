import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import type * as vscode from 'vscode';

/**
 * A minimal MCP client over stdio, as VS Code is one to the servers the extension offers: starts
 * a server the way an `McpStdioServerDefinition` says (command, args, env over the extension
 * host's, cwd), and sends it JSON-RPC requests one line each, waiting for the matching answer.
 */
export class McpStdioClient {
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly pending = new Map<number, { resolve: (m: JsonRpcAnswer) => void; reject: (e: Error) => void }>();
  private nextId = 1;
  private buffered = '';
  /** What the server wrote to stderr (for a failure's message). */
  stderr = '';
  private exited: string | undefined;

  constructor(server: vscode.McpStdioServerDefinition) {
    const env: NodeJS.ProcessEnv = { ...process.env };
    for (const [k, v] of Object.entries(server.env)) {
      if (v === null) delete env[k];
      else env[k] = String(v);
    }
    this.child = spawn(server.command, server.args, { cwd: server.cwd?.fsPath, env, stdio: ['pipe', 'pipe', 'pipe'] });
    this.child.stdout.setEncoding('utf8').on('data', (chunk: string) => this.read(chunk));
    this.child.stderr.setEncoding('utf8').on('data', (chunk: string) => (this.stderr += chunk));
    this.child.on('exit', (code, signal) => {
      this.exited = `the server exited (${signal ?? code})${this.stderr ? `: ${this.stderr.trim()}` : ''}`;
      for (const p of this.pending.values()) p.reject(new Error(this.exited));
      this.pending.clear();
    });
  }

  /** Sends `method` and resolves with its answer; rejects on an error answer, the server's exit, or after `timeoutMs`. */
  request(method: string, params: Record<string, unknown> = {}, timeoutMs = 20_000): Promise<Record<string, unknown>> {
    if (this.exited) return Promise.reject(new Error(this.exited));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`no answer to ${method} within ${timeoutMs} ms${this.stderr ? `; stderr: ${this.stderr.trim()}` : ''}`));
      }, timeoutMs);
      this.pending.set(id, {
        resolve: (m) => {
          clearTimeout(timer);
          if (m.error) reject(new Error(`${method}: ${JSON.stringify(m.error)}`));
          else resolve(m.result ?? {});
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      });
      this.child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
    });
  }

  notify(method: string, params: Record<string, unknown> = {}): void {
    this.child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method, params })}\n`);
  }

  /** initialize, then initialized, as every client opens a session; resolves with the server's answer. */
  async initialize(): Promise<Record<string, unknown>> {
    const answer = await this.request('initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'mam-vscode-test', version: '0' } });
    this.notify('notifications/initialized');
    return answer;
  }

  /** Ends the server as a client does: closes its stdin, then kills it if it lingers. */
  async close(): Promise<void> {
    if (this.exited) return;
    const gone = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    this.child.stdin.end();
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 5_000);
    await gone;
    clearTimeout(timer);
  }

  private read(chunk: string): void {
    this.buffered += chunk;
    for (let nl = this.buffered.indexOf('\n'); nl >= 0; nl = this.buffered.indexOf('\n')) {
      const line = this.buffered.slice(0, nl).trim();
      this.buffered = this.buffered.slice(nl + 1);
      if (!line) continue;
      let message: JsonRpcAnswer;
      try {
        message = JSON.parse(line) as JsonRpcAnswer;
      } catch {
        continue; // not ours to judge here: a server's stray line
      }
      const waiting = typeof message.id === 'number' ? this.pending.get(message.id) : undefined;
      if (waiting) {
        this.pending.delete(message.id as number);
        waiting.resolve(message);
      }
    }
  }
}

interface JsonRpcAnswer {
  id?: unknown;
  result?: Record<string, unknown>;
  error?: unknown;
}
