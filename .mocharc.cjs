/**
 * mocha's configuration for `npm test`: every unit, integration and fault test, three files at a
 * time in parallel workers. Workers take files in the order given, so the longest go first: started
 * last (as alphabetical order had the fault suites), they left one or two workers running alone at
 * the end (CI's mocha: 864 s for ~2,300 s of tests over three workers). The list is a measurement
 * (seconds per file in a CI run, 2026-12-04); a file missing from it runs after them, as before.
 */
const fs = require('node:fs');
const path = require('node:path');

const LONGEST_FIRST = [
  'test/integration/loop.test.ts', // 191 s
  'test/integration/realAgents.test.ts', // 155
  'test/integration/realOpencode.test.ts', // 112
  'test/integration/jobs.test.ts', // 111
  'test/integration/realAgentsLoop.test.ts', // 109
  'test/faults/broker.test.ts', // 96
  'test/integration/merge.test.ts', // 90
  'test/integration/realQwen.test.ts', // 86
  'test/integration/registryConcurrency.test.ts', // 82
  'test/integration/plan.test.ts', // 81
  'test/integration/seedWords.test.ts', // 64
  'test/faults/partition.test.ts', // 64
  'test/integration/remote.test.ts', // 63
  'test/faults/planKilled.test.ts', // 54
  'test/integration/sessionsCli.test.ts', // 52
  'test/faults/manyHosts.test.ts', // 50
  'test/integration/realAgentsPlan.test.ts', // 49
  'test/integration/mcp.test.ts', // 48
  'test/integration/realGemini.test.ts', // 47
  'test/integration/realMcpClients.test.ts', // 46
  'test/integration/runnerPresence.test.ts', // 45
  'test/integration/seedLines.test.ts', // 41
  'test/integration/realCopilot.test.ts', // 39
  'test/faults/loopKilled.test.ts', // 38
];
const FOLDERS = ['test/unit', 'test/integration', 'test/faults'];

function testFiles(folder) {
  return fs
    .readdirSync(path.join(__dirname, folder), { recursive: true })
    .filter((name) => name.endsWith('.test.ts'))
    .map((name) => path.posix.join(folder, name.split(path.sep).join('/')))
    .sort();
}

const all = FOLDERS.flatMap(testFiles);
const first = LONGEST_FIRST.filter((file) => all.includes(file));

module.exports = {
  require: ['esbuild-register', 'test/support/guard.ts'],
  spec: [...first, ...all.filter((file) => !first.includes(file))],
  extension: ['ts'],
  parallel: true,
  jobs: 3,
  timeout: 30000,
  reporter: 'spec',
};
