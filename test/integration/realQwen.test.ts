/**
 * The real Qwen Code CLI (0.15.10) through MAM, against the project's model server, in an ordinary
 * checkout (test/support/realCliSuite.ts says what is shown).
 */
import { describeRealCli } from '../support/realCliSuite';

describeRealCli({
  agent: 'qwen',
  firstRun: { title: 'its sign-in choice', home: { qwenLogin: false }, named: /qwen shows its sign-in choice \("Select Authentication Method"\)\. .*settings\.json/, onScreen: /Select Authentication Method/ },
});
