import { strict as assert } from 'node:assert';
import * as vscode from 'vscode';
import type { MamApi } from '../../../src/extension';
import { waitFor } from '../waitFor';
import { CANCEL, Prompts, type Asked } from './prompts';
import { EXTENSION_ID, FOLDER_QUESTION, mamApi } from './support';

/**
 * How each command the Command Palette offers asks for its folder in a window with two folders
 * that use MAM (api, web) and one that does not (docs):
 * - `one`: a pick of the two MAM folders (its subject, a session, job or loop, comes after);
 * - `many`: the same with "All folders" first (commands that can act on every folder at once);
 * - `every`: every folder of the window, docs too (what brings MAM to a folder);
 * - `none`: not about a folder (the window's views; the window's broker settings).
 * A command added to package.json must be given its kind here, or this test fails.
 */
const HOW: Record<string, 'one' | 'many' | 'every' | 'none'> = {
  'mam.createSession': 'one',
  'mam.stopSession': 'one',
  'mam.resumeSession': 'one',
  'mam.resumeAllSessions': 'many',
  'mam.stopAllSessions': 'many',
  'mam.attachSession': 'one',
  'mam.sendMessage': 'one',
  'mam.purgeConversation': 'one',
  'mam.delegateJob': 'one',
  'mam.initWorkspace': 'every',
  'mam.delegateToPerson': 'one',
  'mam.startPersonJob': 'one',
  'mam.completePersonJob': 'one',
  'mam.cancelJob': 'one',
  'mam.showJobLog': 'one',
  'mam.showPaneText': 'one',
  'mam.openBrief': 'one',
  'mam.verifyJob': 'one',
  'mam.configureBroker': 'none',
  'mam.startMonitor': 'many',
  'mam.stopMonitor': 'many',
  'mam.startBroker': 'many',
  'mam.stopBroker': 'many',
  'mam.runDoctor': 'many',
  'mam.openControlPlane': 'one',
  'mam.refresh': 'none',
  'mam.runLoop': 'one',
  'mam.reviewOnly': 'one',
  'mam.openReport': 'one',
  'mam.openChanges': 'one',
  'mam.openChangesSinceLastRound': 'one',
  'mam.resumeLoop': 'one',
  'mam.cancelLoop': 'one',
  'mam.runDemo': 'one',
  'mam.addToGitignore': 'one',
  'mam.runMergeQueue': 'one',
  'mam.enqueueMerge': 'one',
  'mam.runPlan': 'one',
  'mam.draftPlan': 'one',
  'mam.openPlan': 'one',
  'mam.resumePlan': 'one',
  'mam.cancelPlan': 'one',
  'mam.showPlanLog': 'one',
};

describe('a multi-root window: every command from the Command Palette asks which folder', function () {
  this.timeout(60_000);
  let api: MamApi;
  const prompts = new Prompts();
  const pkg = () => vscode.extensions.getExtension(EXTENSION_ID)!.packageJSON as {
    contributes: { commands: Array<{ command: string }>; menus: { commandPalette: Array<{ command: string; when: string }> } };
  };
  /** The commands the palette lists: all but those hidden there (`when: false`: row-only commands). */
  const paletteCommands = () => {
    const hidden = new Set(pkg().contributes.menus.commandPalette.filter((m) => m.when === 'false').map((m) => m.command));
    return pkg().contributes.commands.map((c) => c.command).filter((c) => !hidden.has(c));
  };
  const folders = () => api.host.mamFolders;
  const prepare: Record<string, () => unknown> = {
    'mam.startMonitor': () => folders().forEach((fe) => fe.engine.core.monitor.stop()),
    'mam.stopMonitor': () => folders().forEach((fe) => fe.engine.core.monitor.start()),
    'mam.startBroker': () => Promise.all(folders().map((fe) => fe.engine.stopBroker())),
    'mam.stopBroker': () => Promise.all(folders().map((fe) => fe.engine.startBroker())),
  };
  const labels = (a: Asked | undefined) => a?.items?.map((i) => i.label.replace(/^\$\([^)]*\) /, ''));

  before(async () => {
    api = await mamApi();
    // Both folders that hold .mam/ are running (their monitors, their brokers) before anything is asked.
    await waitFor('both engines to start', () => api.host.mamFolders.length === 2 && api.host.mamFolders.every((fe) => fe.engine.core.monitor.running && fe.engine.embeddedBroker()?.running), 30_000);
    prompts.install();
  });
  after(() => prompts.restore());
  afterEach(() => {
    assert.deepEqual(prompts.errors.splice(0), [], 'no command reported an error');
    assert.deepEqual(prompts.answers.splice(0), [], 'every prepared answer was asked for');
  });

  it('the window: three folders, two of them using MAM; while neither holds anything, the views are empty (their welcome text shows)', async () => {
    assert.deepEqual(vscode.workspace.workspaceFolders?.map((f) => f.name), ['api', 'web', 'docs']);
    assert.deepEqual(api.host.mamFolders.map((fe) => fe.folder.name), ['api', 'web']);
    assert.equal(api.host.multiRoot, true);
    assert.deepEqual(await Promise.all([api.sessions.getChildren(), api.jobs.getChildren(), api.loops.getChildren(), api.mergeQueue.getChildren(), api.plans.getChildren()]), [[], [], [], [], []]);
  });

  it('every palette command is classified here, and each asks as its kind says before doing anything', async () => {
    const commands = paletteCommands();
    assert.deepEqual(commands.filter((c) => !(c in HOW)), [], 'a palette command this test does not know: give it its kind in HOW');
    const wrong: string[] = [];
    for (const command of commands) {
      const how = HOW[command]!;
      const from = prompts.asked.length;
      // The monitor and broker commands offer only folders where there is something to start or stop.
      await prepare[command]?.();
      prompts.answers.push(CANCEL);
      if (how === 'none') prompts.answers.splice(0); // nothing to answer (Configure Broker asks its own question: closed below)
      if (command === 'mam.configureBroker') prompts.answers.push(CANCEL);
      await vscode.commands.executeCommand(command);
      const first = prompts.asked[from];
      const expected = { one: ['api', 'web'], many: ['All folders', 'api', 'web'], every: ['api', 'web', 'docs'], none: undefined }[how];
      const shown = first?.placeholder === FOLDER_QUESTION ? labels(first) : undefined;
      if (JSON.stringify(shown) !== JSON.stringify(expected)) wrong.push(`${command}: ${how}, but asked ${first ? `${first.kind} "${first.placeholder ?? first.title}" (${labels(first)?.join(', ') ?? ''})` : 'nothing'}`);
      // Closing the folder pick ends the command: nothing else is asked.
      if (how !== 'none' && prompts.asked.length !== from + 1) wrong.push(`${command}: asked more after the folder pick was closed: ${prompts.asked.slice(from + 1).map((a) => a.placeholder ?? a.title).join(' | ')}`);
    }
    prompts.answers.splice(0);
    assert.deepEqual(wrong, []);
  });

  it('All folders: Stop and Start Broker, Stop and Start Monitor act on both folders', async () => {
    const running = () => api.host.mamFolders.map((fe) => [fe.folder.name, fe.engine.embeddedBroker()?.running, fe.engine.core.monitor.running]);
    for (const command of ['mam.stopBroker', 'mam.stopMonitor']) {
      prompts.answers.push('All folders');
      await vscode.commands.executeCommand(command);
    }
    assert.deepEqual(running(), [['api', false, false], ['web', false, false]]);
    for (const command of ['mam.startBroker', 'mam.startMonitor']) {
      prompts.answers.push('All folders');
      await vscode.commands.executeCommand(command);
    }
    assert.deepEqual(running(), [['api', true, true], ['web', true, true]]);
  });

  it('the folder pick puts the active editor’s folder first, so Enter takes it', async () => {
    const web = api.host.mamFolders.find((fe) => fe.folder.name === 'web')!;
    await vscode.window.showTextDocument(vscode.Uri.joinPath(web.folder.uri, 'README.md'));
    const from = prompts.asked.length;
    prompts.answers.push(CANCEL);
    await vscode.commands.executeCommand('mam.openControlPlane');
    assert.deepEqual(labels(prompts.asked[from]), ['web', 'api']);
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });
});
