/**
 * The entry of dist/engine.js. The extension's own bundle holds only views and commands; it loads
 * this (SQLite, MQTT, the jobs engine) when a workspace folder first needs it, so that activation
 * stays cheap.
 */
export { createWorkspaceEngine, WorkspaceEngine } from './core/workspaceEngine';
export { UntrustedWorkspaceError } from './core/base/trust';
export type { BrokerSecret } from './core/brokerSecret';
export type { WorkspaceEngineOptions } from './core/workspaceEngine';
