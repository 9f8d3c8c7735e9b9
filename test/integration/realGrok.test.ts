/**
 * The real grok CLI (`@xai-official/grok` 1.0.41) through MAM, against the project's model server,
 * in an ordinary checkout (test/support/realCliSuite.ts says what is shown).
 */
import { describeRealCli } from '../support/realCliSuite';

describeRealCli({
  agent: 'grok',
  // At start it reaches for x.ai itself, whatever its API base URL; refused, it goes on (docs/agent-clis.md).
  knownOutbound: /^x\.ai:443$/,
  firstRun: { title: 'its sign-in screen', env: { XAI_API_KEY: undefined }, named: /grok shows its sign-in screen\. .*XAI_API_KEY/, onScreen: /Login with Grok/ },
});
