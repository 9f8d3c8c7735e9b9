/**
 * The real gemini CLI (0.61.0) through MAM, against the project's model server, in an ordinary
 * checkout (test/support/realCliSuite.ts says what is shown).
 */
import { describeRealCli } from '../support/realCliSuite';

describeRealCli({
  agent: 'gemini',
  firstRun: { title: 'its folder-trust question', home: { trustProjects: false }, named: /gemini shows its folder-trust question\. .*trustedFolders\.json/, onScreen: /Do you trust the files in this folder\?/ },
});
