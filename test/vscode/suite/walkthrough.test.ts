import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { EXTENSION_ID, mamApi } from './support';

interface Step {
  id: string;
  title: string;
  description: string;
  media: { svg?: string; image?: string; markdown?: string; altText?: string };
  completionEvents?: string[];
  when?: string;
}
interface Walkthrough {
  id: string;
  title: string;
  description: string;
  steps: Step[];
}

/** The categories VS Code 1.100 knows (its extension-manifest validation); others are flagged. */
const KNOWN_CATEGORIES = ['AI', 'Azure', 'Chat', 'Data Science', 'Debuggers', 'Extension Packs', 'Education', 'Formatters', 'Keymaps', 'Language Packs', 'Linters', 'Machine Learning', 'Notebooks', 'Programming Languages', 'SCM Providers', 'Snippets', 'Testing', 'Themes', 'Visualization', 'Other'];

/** A link alone on its line: the walkthrough shows it as a button. */
const BUTTON = /^\[([^\]]+)\]\(command:([\w.-]+)\)$/;

/**
 * The extension as the Extensions view and the Welcome page present it: its icon, categories and
 * keywords, and the Getting Started walkthrough, whose buttons must run commands that exist and whose
 * steps must tick off when those commands run.
 */
describe('first run: icon, categories and the Getting Started walkthrough', () => {
  let ext: vscode.Extension<unknown>;
  let walkthrough: Walkthrough;
  let registered: Set<string>;

  before(async () => {
    await mamApi();
    ext = vscode.extensions.getExtension(EXTENSION_ID)!;
    const contributed = (ext.packageJSON.contributes?.walkthroughs ?? []) as Walkthrough[];
    assert.equal(contributed.length, 1, 'one walkthrough');
    walkthrough = contributed[0]!;
    registered = new Set(await vscode.commands.getCommands(true));
  });

  it('the icon is a 128×128 PNG inside the extension', () => {
    const icon = path.join(ext.extensionPath, ext.packageJSON.icon as string);
    const png = fs.readFileSync(icon);
    assert.ok(png.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])), `${icon} is not a PNG`);
    assert.equal(png.toString('ascii', 12, 16), 'IHDR');
    assert.deepEqual([png.readUInt32BE(16), png.readUInt32BE(20)], [128, 128]);
  });

  it('categories VS Code knows, and at most five keywords (what the marketplace shows)', () => {
    const categories = ext.packageJSON.categories as string[];
    assert.ok(categories.includes('AI'));
    assert.deepEqual(categories.filter((c) => !KNOWN_CATEGORIES.includes(c)), []);
    const keywords = ext.packageJSON.keywords as string[];
    assert.ok(keywords.length > 0 && keywords.length <= 5, `keywords: ${keywords.join(', ')}`);
  });

  it('walks through the demo, a session, a job, a review loop and Initialize Workspace', () => {
    const ids = walkthrough.steps.map((s) => s.id);
    for (const id of ['demo', 'createSession', 'delegateJob', 'reviewLoop', 'initWorkspace']) assert.ok(ids.includes(id), `no step ${id} among ${ids.join(', ')}`);
    assert.equal(new Set(ids).size, ids.length, 'step ids are unique');
  });

  it("each step has one button, running a registered command that ticks the step off", () => {
    const contributed = new Map((ext.packageJSON.contributes.commands as Array<{ command: string; title: string }>).map((c) => [c.command, c.title]));
    for (const step of walkthrough.steps) {
      const buttons = step.description.split('\n').map((line) => BUTTON.exec(line.trim())).filter((m) => m !== null);
      assert.equal(buttons.length, 1, `step ${step.id}: one button`);
      const [, label, command] = buttons[0]!;
      assert.ok(registered.has(command!), `step ${step.id}: its button's command ${command} is not registered`);
      const events = step.completionEvents ?? [];
      assert.ok(events.length > 0, `step ${step.id} has no completion event (it would tick off as soon as it is opened)`);
      if (command!.startsWith('mam.')) {
        assert.deepEqual(events, [`onCommand:${command}`], `step ${step.id} ticks off when its command runs`);
        // The button says what the Command Palette says (without the "…" of a command that asks first).
        assert.equal(label, contributed.get(command!)?.replace(/…$/, ''), `step ${step.id}: the button's label is the command's title`);
      }
      for (const e of events.filter((e) => e.startsWith('onCommand:'))) assert.ok(registered.has(e.slice('onCommand:'.length)), `step ${step.id}: ${e} names no registered command`);
    }
  });

  it("each step's media is in the extension; its pictures draw only in theme colours and have alt text", () => {
    for (const step of walkthrough.steps) {
      const file = step.media.svg ?? step.media.image ?? step.media.markdown;
      assert.ok(file, `step ${step.id} has media`);
      const text = fs.readFileSync(path.join(ext.extensionPath, file), 'utf8');
      if (step.media.markdown) continue;
      assert.ok(step.media.altText && step.media.altText.length > 20, `step ${step.id}: alt text`);
      assert.ok(step.media.svg, `step ${step.id}: an SVG, which follows the theme`);
      // The walkthrough inlines the SVG in a webview whose CSP allows no <style> or script of ours.
      assert.doesNotMatch(text, /<(style|script)\b/, `${file}: no <style> or <script>`);
      const colours = [...text.matchAll(/\s(fill|stroke|stop-color)="([^"]*)"/g)].map((m) => m[2]!);
      assert.ok(colours.length > 5, `${file} draws something`);
      assert.deepEqual(colours.filter((c) => c !== 'none' && !c.startsWith('var(--vscode-')), [], `${file}: colours come from the theme`);
    }
  });
});
