/**
 * The real opencode CLI (1.18.33) through MAM, against the project's model server, in an ordinary
 * checkout (test/support/realCliSuite.ts says what is shown). opencode has no first-run screen.
 */
import { describeRealCli } from '../support/realCliSuite';

describeRealCli({
  agent: 'opencode',
  // At start it installs its plugin package into ~/.config/opencode from the npm registry, with no
  // switch to turn that off; the proxy refuses it and opencode goes on without (docs/agent-clis.md).
  knownOutbound: /^registry\.npmjs\.org:443$/,
});
