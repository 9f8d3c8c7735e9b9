/**
 * The real Copilot CLI (1.0.102) through MAM, against the project's model server, in an ordinary
 * checkout (test/support/realCliSuite.ts says what is shown).
 */
import { describeRealCli } from '../support/realCliSuite';

describeRealCli({
  agent: 'copilot',
  firstRun: { title: 'its folder-trust question', home: { trustProjects: false }, named: /copilot shows its folder-trust question\. .*trustedFolders/, onScreen: /Confirm folder trust/ },
});
