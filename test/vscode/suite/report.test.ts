import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { MamApi } from '../../../src/extension';
import { buildModel } from '../../../src/views/loops/reportPanel';
import { isHostMessage } from '../../../src/webview/reportProtocol';
import { axisFor, barSpan, loopSpan } from '../../../src/webview/timeline';
import { waitFor } from '../waitFor';
import { cleanUp, fakeAgentCommand, mamApi } from './support';

const GIT_ENV = { GIT_AUTHOR_NAME: 'Test', GIT_AUTHOR_EMAIL: 't@example.invalid', GIT_COMMITTER_NAME: 'Test', GIT_COMMITTER_EMAIL: 't@example.invalid' };

describe('the review report: the model it draws, its timeline, its links, its security policy', function () {
  this.timeout(120_000);
  let api: MamApi;
  let repo: string;
  let outside: string;
  let loopId: string;
  const engine = () => api.host.current[0]!.engine;

  before(async () => {
    api = await mamApi();
    Object.assign(process.env, GIT_ENV);
    repo = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'mam-report-repo-')));
    outside = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'mam-report-outside-')));
    fs.writeFileSync(path.join(outside, 'secret.txt'), 'not for reports\n');
    const git = (...args: string[]) => execFileSync('git', args, { cwd: repo, env: { ...process.env, ...GIT_ENV } });
    git('init', '-q');
    fs.writeFileSync(path.join(repo, 'feature.txt'), 'the start\nline two\n');
    git('add', '-A');
    git('commit', '-q', '-m', 'initial');
    const session = (name: string, role: string, mode: string, extra: string[] = []) => engine().core.sessions.create({ name, agent: 'claude', role, cwd: repo, baseDir: repo, command: fakeAgentCommand(mode, extra) });
    await session('report-creator', 'creator', 'creator');
    await session('report-reviewer', 'reviewer', 'reviewer', ['--verdicts', 'NOT PASS,PASS']);
    const before = new Set(engine().core.loops.list().map((l) => l.id));
    await vscode.commands.executeCommand('mam.runLoop', { folderIndex: 0, creator: 'report-creator', reviewers: ['report-reviewer'], task: 'Make the start stronger.\nKeep the second line as it is.', worktree: repo });
    const loop = engine().core.loops.list().find((l) => !before.has(l.id))!;
    assert.equal(loop.status, 'passed');
    loopId = loop.id;
  });
  after(async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await cleanUp(api);
    for (const dir of [repo, outside]) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('a finished loop opened ten minutes later: the axis covers the loop (≤ 1.3 × its duration), not the time since', async () => {
    const loop = engine().core.loops.get(loopId)!;
    const model = (await buildModel(api.host, 0, loopId))!;
    assert.ok(isHostMessage({ type: 'model', model }), 'the model passes the page’s own check');
    // The loop's duration from the engine's own records: its start to the end of its last job.
    const jobs = loop.steps.map((s) => engine().core.jobs.index.get(s.job_id) ?? engine().core.controlPlane.jobs.get(s.job_id)!);
    const start = Math.min(Date.parse(loop.created_at), ...jobs.map((j) => Date.parse(j.dispatched_at!)));
    const end = Math.max(...jobs.map((j) => Date.parse(j.finished_at!)));
    const later = { ...model, now: new Date(end + 10 * 60_000).toISOString() };
    const span = loopSpan(later);
    assert.equal(span.running, false);
    assert.equal(span.start, start);
    assert.ok(span.end >= end && span.end - end < 1000, `the span ends with the last job (${span.end - end} ms after it)`);
    const axis = axisFor(span.start, span.end - span.start);
    assert.ok(axis.length <= 1.3 * (end - start), `axis ${axis.length} ms for a loop of ${end - start} ms`);
    assert.ok(axis.ticks.every((t) => / s$/.test(t.label)), `ticks in seconds: ${axis.ticks.map((t) => t.label).join(', ')}`);
    for (const job of later.jobs) {
      const bar = barSpan(job, span)!;
      assert.ok(bar.from >= span.start && bar.to <= span.start + axis.length && bar.to > bar.from, `${job.step} lies on the axis`);
    }
    assert.equal(model.title, 'Make the start stronger', 'the task’s first sentence, as the Loops tree shows it');
    assert.deepEqual(model.jobs.map((j) => j.title), ['Implement', 'Review · round 1', 'Fix · round 1', 'Review · round 2']);
    assert.deepEqual(model.rounds.map((r) => r.reviews.map((v) => v.verdict)), [['NOT PASS'], ['PASS']]);
  });

  it('says what the loop spent, per round and in total, from the agents’ own records, money only as an estimate', async () => {
    // Each agent writes its turn's last message after its `completed`: the readings settle once it has.
    const model = await waitFor('every job of the loop measured', async () => {
      const m = (await buildModel(api.host, 0, loopId))!;
      return m.usage.total && !m.usage.total.includes('so far') ? m : undefined;
    });
    const loop = engine().core.loops.get(loopId)!;
    const jobs = loop.steps.map((s) => engine().core.controlPlane.jobs.get(s.job_id)!);
    const sum = (key: 'input_tokens' | 'output_tokens') => jobs.reduce((n, j) => n + (j.usage && 'input_tokens' in j.usage ? j.usage[key] : 0), 0);
    const n = (v: number) => v.toLocaleString('en-US');
    assert.ok(sum('input_tokens') > 0, 'the jobs record what their conversations spent');
    assert.match(model.usage.total!, new RegExp(`^${n(sum('input_tokens'))} in \\(\\d[\\d,]* cached\\) · ${n(sum('output_tokens'))} out · ≈ (<\\$0\\.01|\\$\\d+\\.\\d\\d) \\(estimate\\)$`));
    assert.deepEqual(model.usage.rounds.map((r) => [r.n, typeof r.text]), [[1, 'string'], [2, 'string']]);
  });

  it('agent text reaches the page without control characters, newlines kept', async () => {
    const file = path.join(api.host.current[0]!.folder.uri.fsPath, '.mam', 'loops', `${loopId}.json`);
    const saved = fs.readFileSync(file, 'utf8');
    const state = JSON.parse(saved);
    state.steps.find((s: { key: string }) => s.key === 'r1:review:report-reviewer').text = '# Findings\n\n\x1b]0;owned\x07- \x1b[31mred\x1b[0m <script>x</script>\n\n[VERDICT: NOT PASS]\n';
    try {
      fs.writeFileSync(file, JSON.stringify(state));
      const text = await waitFor('the edited report in the model', async () => {
        const shown = (await buildModel(api.host, 0, loopId))?.rounds[0]?.reviews[0]?.text;
        return shown?.includes('Findings') ? shown : undefined;
      });
      assert.ok(!/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/.test(text), JSON.stringify(text));
      assert.match(text, /^# Findings\n\n]0;owned- \[31mred\[0m <script>x<\/script>\n/, 'the rest kept as text, for the markdown renderer to escape');
    } finally {
      fs.writeFileSync(file, saved);
    }
  });

  it('a link in a report opens a file of the checkout at its line, and nothing outside it', async () => {
    assert.equal(await api.reports.openLink(0, loopId, 'feature.txt#L2'), true);
    const editor = await waitFor('feature.txt in an editor', () => (vscode.window.activeTextEditor?.document.uri.fsPath === path.join(repo, 'feature.txt') ? vscode.window.activeTextEditor : undefined));
    assert.equal(editor.selection.active.line, 1, 'at line 2');
    for (const href of [path.join(outside, 'secret.txt'), `file://${path.join(outside, 'secret.txt')}`, '../' + path.relative(path.dirname(repo), path.join(outside, 'secret.txt')), 'javascript:alert(1)', 'command:workbench.action.terminal.new', 'missing.txt']) {
      assert.equal(await api.reports.openLink(0, loopId, href), false, href);
    }
    const opened = vscode.window.tabGroups.all.flatMap((g) => g.tabs).map((t) => (t.input instanceof vscode.TabInputText ? t.input.uri.fsPath : ''));
    assert.ok(!opened.some((p) => p.startsWith(outside)), `nothing outside the checkout opened: ${opened.join(', ')}`);
  });

  it('the page runs under a strict content security policy: no remote content, one nonce’d script', async () => {
    await vscode.commands.executeCommand('mam.openReport', { folderIndex: 0, loopId });
    const panel = await waitFor('the report panel', () => api.reports.open.find((p) => p.loopId === loopId)?.panel);
    const html = panel.webview.html;
    const csp = /http-equiv="Content-Security-Policy" content="([^"]*)"/.exec(html)?.[1] ?? '';
    // Nothing but the webview's own resources (media/) and one nonce'd script: no inline style or script, no remote host.
    const nonce = /script-src 'nonce-([A-Za-z0-9+/=]+)'/.exec(csp)?.[1];
    assert.ok(nonce, csp);
    assert.equal(csp, `default-src 'none'; style-src ${panel.webview.cspSource}; img-src ${panel.webview.cspSource}; font-src ${panel.webview.cspSource}; script-src 'nonce-${nonce}';`);
    const scripts = [...html.matchAll(/<script\b[^>]*>/g)].map((m) => m[0]);
    assert.deepEqual(scripts.map((s) => s.includes(`nonce="${nonce}"`)), [true], 'one script, with this render’s nonce');
    assert.equal(panel.title, 'Review: Make the start stronger');
  });
});
