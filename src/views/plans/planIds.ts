/**
 * The Plans view's and its commands' IDs (package.json contributes the same; test/unit/contributions.test.ts
 * checks). In a file of their own because the view (plansTree.ts), its commands (planCommands.ts)
 * and the plan page (src/views/loops/reportPanel.ts) all name them.
 */
export const PlanIds = {
  view: 'mam.plans',
  run: 'mam.runPlan',
  draft: 'mam.draftPlan',
  resume: 'mam.resumePlan',
  cancel: 'mam.cancelPlan',
  showLog: 'mam.showPlanLog',
  open: 'mam.openPlan',
} as const;
