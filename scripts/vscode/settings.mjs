// The user settings every test run of the extension starts with, in code-server (run.mjs) and in
// VS Code desktop (.vscode-test.mjs): no start page, tips, telemetry, updates or experiments.
export const QUIET_SETTINGS = {
  'workbench.startupEditor': 'none',
  'workbench.tips.enabled': false,
  'telemetry.telemetryLevel': 'off',
  'extensions.autoCheckUpdates': false,
  'extensions.autoUpdate': false,
  'update.mode': 'none',
  'extensions.ignoreRecommendations': true,
  'workbench.enableExperiments': false,
};
