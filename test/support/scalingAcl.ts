/**
 * The per-user Mosquitto ACL docs/scaling.md gives for a shared broker, as test/support/netns.ts's
 * `startMosquittoOn` takes it: one user for the submitter's workspace, one per runner host. The
 * three-host fault test and bench run MAM under exactly these lines, so the example is known to
 * let every part work and to keep each runner to its own topics.
 */
export function aclFor(submitter: string, runners: Array<{ name: string; workspace: string }>): Array<{ name: string; topics: string[] }> {
  return [
    {
      name: 'submitter',
      topics: [`topic readwrite mam/${submitter}/#`, 'topic write mam/remote/+/dispatch/#', 'topic write mam/remote/+/cancel/#', 'topic read mam/remote/+/presence'],
    },
    ...runners.map((r) => ({
      name: `runner-${r.name}`,
      topics: [`topic readwrite mam/remote/${r.name}/#`, `topic readwrite mam/${r.workspace}/#`, `topic write mam/${submitter}/jobs/+/events`, `topic read mam/${submitter}/jobs/+/state`],
    })),
  ];
}
