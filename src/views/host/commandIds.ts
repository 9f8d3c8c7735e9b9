/**
 * The commands several views share (package.json lists the same IDs). A view with commands of its
 * own declares them in its own file (src/views/merge/mergeQueueTree.ts); test/unit/contributions.test.ts
 * checks that every ID used in src is contributed, and every contributed one used.
 */
export const Commands = {
  createSession: 'mam.createSession',
  stopSession: 'mam.stopSession',
  resumeSession: 'mam.resumeSession',
  resumeAllSessions: 'mam.resumeAllSessions',
  stopAllSessions: 'mam.stopAllSessions',
  attachSession: 'mam.attachSession',
  sendMessage: 'mam.sendMessage',
  purgeConversation: 'mam.purgeConversation',
  copyConversationId: 'mam.copyConversationId',
  delegateJob: 'mam.delegateJob',
  delegateToPerson: 'mam.delegateToPerson',
  startPersonJob: 'mam.startPersonJob',
  completePersonJob: 'mam.completePersonJob',
  cancelJob: 'mam.cancelJob',
  showJobLog: 'mam.showJobLog',
  showPaneText: 'mam.showPaneText',
  openBrief: 'mam.openBrief',
  verifyJob: 'mam.verifyJob',
  configureBroker: 'mam.configureBroker',
  startMonitor: 'mam.startMonitor',
  stopMonitor: 'mam.stopMonitor',
  startBroker: 'mam.startBroker',
  stopBroker: 'mam.stopBroker',
  runDoctor: 'mam.runDoctor',
  openControlPlane: 'mam.openControlPlane',
  refresh: 'mam.refresh',
  runLoop: 'mam.runLoop',
  reviewOnly: 'mam.reviewOnly',
  openReport: 'mam.openReport',
  openChanges: 'mam.openChanges',
  openChangesSinceLastRound: 'mam.openChangesSinceLastRound',
  resumeLoop: 'mam.resumeLoop',
  cancelLoop: 'mam.cancelLoop',
  openSnapshotDiff: 'mam.openSnapshotDiff',
  runDemo: 'mam.runDemo',
  addToGitignore: 'mam.addToGitignore',
  initWorkspace: 'mam.initWorkspace',
} as const;

/** Context keys for `when` clauses, all under `mam.`. */
export const ContextKeys = {
  /** Some folder's monitor runs / some folder that uses MAM has none running (multi-root: both can hold). */
  monitoring: 'mam.monitoring',
  monitorStopped: 'mam.monitor.stopped',
  /** Some folder's embedded broker runs / is stopped (neither: every folder uses a broker of its own). */
  brokerRunning: 'mam.broker.running',
  brokerStopped: 'mam.broker.stopped',
} as const;

export const Views = {
  container: 'mam',
  sessions: 'mam.sessions',
  jobs: 'mam.jobs',
  loops: 'mam.loops',
} as const;

/** The secret-storage key of the external broker's password. */
export const BROKER_PASSWORD_SECRET = 'mam.broker.password';
