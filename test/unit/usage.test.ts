import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { StoreContext } from '../../src/core/agents/adapter';
import { endedAsSent } from '../../src/core/jobs/jobUsage';
import type { AuditEntry } from '../../src/core/store/auditLog';
import { validateJobRecord } from '../../src/core/store/jobSchema';
import { claudeConversationFile, readClaudeConversation } from '../../src/core/usage/claudeStore';
import { readCodexRollout } from '../../src/core/usage/codexStore';
import { formatUsage } from '../../src/core/usage/format';
import { measureJobUsage } from '../../src/core/usage/measure';
import { DEFAULT_PRICES, estimateCost, loadPriceTable, priceOf } from '../../src/core/usage/prices';
import { sumJobWindow } from '../../src/core/usage/window';
import type { MeasuredUsage } from '../../src/core/store/jobUsageSchema';
import { tempDir } from '../support/helpers';

const FIXTURES = path.join(__dirname, '../fixtures/usage');
const CLAUDE = path.join(FIXTURES, 'claude-2.1.197.jsonl');
const CODEX = path.join(FIXTURES, 'codex-0.171.0.jsonl');
interface FixtureJob { id: string; session: 'claude' | 'codex'; finished_at: string }
const JOBS = JSON.parse(fs.readFileSync(path.join(FIXTURES, 'jobs.json'), 'utf8')) as FixtureJob[];
const lines = (file: string): string[] => fs.readFileSync(file, 'utf8').split('\n').filter(Boolean);

/** What the model server returned for a job's requests, normalised as MAM stores it. */
function served(jobId: string) {
  const sum = { input_tokens: 0, cached_input_tokens: 0, cache_write_input_tokens: 0, output_tokens: 0, reasoning_output_tokens: 0, requests: 0 };
  for (const l of lines(path.join(FIXTURES, 'model-server-usage.jsonl'))) {
    const e = JSON.parse(l) as { api: string; job: string | null; usage: Record<string, number> & { input_tokens_details?: { cached_tokens: number }; output_tokens_details?: { reasoning_tokens: number } } };
    if (e.job !== jobId) continue;
    const u = e.usage;
    sum.requests++;
    sum.output_tokens += u.output_tokens!;
    if (e.api === 'messages') {
      sum.input_tokens += u.input_tokens! + u.cache_read_input_tokens! + u.cache_creation_input_tokens!;
      sum.cached_input_tokens += u.cache_read_input_tokens!;
      sum.cache_write_input_tokens += u.cache_creation_input_tokens!;
    } else {
      sum.input_tokens += u.input_tokens!;
      sum.cached_input_tokens += u.input_tokens_details!.cached_tokens;
      sum.reasoning_output_tokens += u.output_tokens_details!.reasoning_tokens;
    }
  }
  return sum;
}

const read = (agent: 'claude' | 'codex', file: string) => (agent === 'claude' ? readClaudeConversation(file) : readCodexRollout(file));
const fileOf = (agent: 'claude' | 'codex') => (agent === 'claude' ? CLAUDE : CODEX);
const ended = (job: FixtureJob) => Date.parse(job.finished_at);

describe('usage: token sums from the agents\' real stores', () => {
  it('the fixtures are what they claim: claude repeats one message\'s usage over two lines', () => {
    const ids = lines(CLAUDE).map((l) => JSON.parse(l) as { type: string; message?: { id: string } }).filter((r) => r.type === 'assistant').map((r) => r.message!.id);
    assert.ok(ids.length > new Set(ids).size, 'some message has two lines');
    assert.equal(JOBS.length, 4);
  });

  for (const job of JOBS) {
    it(`${job.session}, job ${job.id.slice(-8)}: the sum equals what the model server returned for the job's requests`, () => {
      const sum = sumJobWindow(read(job.session, fileOf(job.session)), job.id, ended(job))!;
      const want = served(job.id);
      assert.ok(want.requests > 0);
      assert.deepEqual(
        { ...sum.totals, requests: sum.requests, closed: sum.closed },
        {
          input_tokens: want.input_tokens,
          cached_input_tokens: want.cached_input_tokens,
          cache_write_input_tokens: job.session === 'claude' ? want.cache_write_input_tokens : 0,
          output_tokens: want.output_tokens,
          reasoning_output_tokens: job.session === 'claude' ? null : want.reasoning_output_tokens,
          requests: want.requests,
          closed: true,
        },
      );
      assert.ok(sum.totals.cached_input_tokens <= sum.totals.input_tokens, 'cached tokens are part of the input');
      assert.deepEqual(Object.keys(sum.models), [job.session === 'claude' ? 'claude-opus-4-8' : 'mam-test-model']);
    });
  }

  for (const agent of ['claude', 'codex'] as const) {
    const [first, second] = JOBS.filter((j) => j.session === agent) as [FixtureJob, FixtureJob];

    it(`${agent}: the window stops at the next job's line, even when the job's end is not known`, () => {
      const sum = sumJobWindow(read(agent, fileOf(agent)), first.id, null)!;
      assert.equal(sum.requests, served(first.id).requests);
      assert.equal(sum.closed, true, 'the next job\'s line closes it');
      const last = sumJobWindow(read(agent, fileOf(agent)), second.id, null)!;
      assert.equal(last.closed, false, 'an open job (no end) whose turn may go on');
    });

    it(`${agent}: the final message, written after the job ended, is counted; before it is written the reading is not final`, () => {
      // The store as it was when the job's `completed` event arrived: cut before the turn's last model call.
      const all = lines(fileOf(agent));
      const at = (l: string) => Date.parse((JSON.parse(l) as { timestamp?: string }).timestamp ?? '') || 0;
      const cut = tempDir('usage');
      const early = path.join(cut, 'early.jsonl');
      // The turn's last model call (its final message) is the last assistant / token_count line.
      const lastLine = all.map((l) => /"type":"(assistant|token_count)"/.test(l)).lastIndexOf(true);
      assert.ok(at(all[lastLine]!) > ended(second), 'the store wrote the final message after the job ended');
      fs.writeFileSync(early, `${all.slice(0, lastLine).join('\n')}\n`);
      const before = sumJobWindow(read(agent, early), second.id, ended(second))!;
      const after = sumJobWindow(read(agent, fileOf(agent)), second.id, ended(second))!;
      assert.equal(before.closed, false);
      assert.equal(before.requests, after.requests - 1);
      assert.equal(after.closed, true);
    });

    it(`${agent}: a torn last line and foreign lines change nothing`, () => {
      const dir = tempDir('usage');
      const file = path.join(dir, 'store.jsonl');
      const all = lines(fileOf(agent));
      const foreign = ['{"type":"something-new","payload":{"type":"token_count"}}', 'not json at all', '[1,2,3]', '{"type":"assistant","message":"a string"}'];
      fs.writeFileSync(file, `${[...all.slice(0, 3), ...foreign, ...all.slice(3)].join('\n')}\n${all[all.length - 1]!.slice(0, 40)}`);
      for (const job of [first, second]) assert.deepEqual(sumJobWindow(read(agent, file), job.id, ended(job)), sumJobWindow(read(agent, fileOf(agent)), job.id, ended(job)));
    });
  }

  it('an ending event applied late (it waited in the outbox) still closes the window at the turn the agent ended', () => {
    const last = JOBS.filter((j) => j.session === 'claude').at(-1)!;
    const applied = new Date(ended(last) + 10 * 60_000).toISOString();
    const entries: AuditEntry[] = [{ type: 'event', at: applied, event: 'completed', seq: 3, ts: last.finished_at }];
    assert.equal(sumJobWindow(read('claude', CLAUDE), last.id, Date.parse(applied))!.closed, false, 'judged by when it was applied, the window never closes');
    const sent = endedAsSent({ finished_at: applied }, entries);
    assert.equal(sent, last.finished_at);
    const sum = sumJobWindow(read('claude', CLAUDE), last.id, Date.parse(sent!))!;
    assert.equal(sum.closed, true);
    assert.equal(sum.requests, served(last.id).requests);
    assert.equal(endedAsSent({ finished_at: applied }, []), applied, 'without the event in the log: when it was applied');
  });

  it('a job whose line is not in the conversation has no window', () => {
    assert.equal(sumJobWindow(readClaudeConversation(CLAUDE), 'j-20990101T000000Z-00000000', null), undefined);
  });
});

describe('usage: measuring a job from a session\'s store', () => {
  const ctxFor = (home: string): StoreContext => ({ home, env: {}, program: [] });

  it('finds claude\'s conversation under HOME by the session folder, and codex\'s rollout by its ID', async () => {
    const home = tempDir('home');
    const cwd = '/work/some project';
    const claudeId = '27187bbd-39d8-429b-abc1-669834226439';
    const claudeFile = claudeConversationFile(ctxFor(home), cwd, claudeId);
    fs.mkdirSync(path.dirname(claudeFile), { recursive: true });
    fs.copyFileSync(CLAUDE, claudeFile);
    const codexId = '01a2314b-1442-73b1-9565-ba591788af69';
    const codexDir = path.join(home, '.codex/sessions/2026/12/01');
    fs.mkdirSync(codexDir, { recursive: true });
    fs.copyFileSync(CODEX, path.join(codexDir, `rollout-2026-12-01T11-08-55-${codexId}.jsonl`));
    for (const job of JOBS) {
      const u = (await measureJobUsage({ agent: job.session, ctx: ctxFor(home), cwd, conversationId: job.session === 'claude' ? claudeId : codexId, jobId: job.id, endedAt: job.finished_at })) as MeasuredUsage;
      assert.equal(u.requests, served(job.id).requests, job.id);
      assert.equal(u.final, true);
      assert.equal(u.input_tokens, served(job.id).input_tokens);
    }
    const missing = await measureJobUsage({ agent: 'codex', ctx: ctxFor(home), cwd, conversationId: 'no-such-id', jobId: JOBS[2]!.id, endedAt: null });
    assert.deepEqual([('unavailable' in missing) && missing.unavailable, missing.final], ["the conversation is not in codex's store", false]);
  });

  it('says so for an agent whose store MAM does not read, and that is final', async () => {
    const u = await measureJobUsage({ agent: 'hermes', ctx: ctxFor(tempDir('home')), cwd: '/x', conversationId: 'c', jobId: 'j', endedAt: null });
    assert.deepEqual([('unavailable' in u) && u.unavailable, u.final], ['not recorded by hermes', true]);
  });
});

describe('usage: the price table and the line shown', () => {
  const usage = (model: string, final = true): MeasuredUsage => ({
    agent: 'claude', conversation_id: 'c', input_tokens: 1_000_000, cached_input_tokens: 600_000, cache_write_input_tokens: 100_000, output_tokens: 100_000, reasoning_output_tokens: null, requests: 3,
    models: { [model]: { input_tokens: 1_000_000, cached_input_tokens: 600_000, cache_write_input_tokens: 100_000, output_tokens: 100_000, reasoning_output_tokens: null } }, final, measured_at: '2026-01-01T00:00:00.000Z',
  });

  it('prices a model by its longest matching prefix; an unknown model has no price and no money', () => {
    assert.equal(priceOf(DEFAULT_PRICES, 'claude-opus-4-1-20250805')!.output, 75);
    assert.equal(priceOf(DEFAULT_PRICES, 'claude-opus-4-8')!.output, 25);
    assert.equal(priceOf(DEFAULT_PRICES, 'gpt-5-mini-2025')!.input, 0.25);
    assert.equal(priceOf(DEFAULT_PRICES, 'mam-test-model'), undefined);
    assert.equal(estimateCost(usage('mam-test-model'), DEFAULT_PRICES), undefined);
    // 300k fresh × 3 + 600k cached × 0.3 + 100k written × 3.75 + 100k out × 15, per million.
    assert.equal(estimateCost(usage('claude-sonnet-4-5'), DEFAULT_PRICES)!.toFixed(4), (0.9 + 0.18 + 0.375 + 1.5).toFixed(4));
  });

  it('formats one line, labelled as an estimate, and says when the reading is not final', () => {
    assert.equal(formatUsage(usage('claude-sonnet-4-5'), DEFAULT_PRICES), '1,000,000 in (600,000 cached) · 100,000 out · ≈ $2.96 (estimate)');
    assert.equal(formatUsage(usage('mam-test-model', false), DEFAULT_PRICES), '1,000,000 in (600,000 cached) · 100,000 out (so far)');
    assert.equal(formatUsage({ agent: 'gemini', unavailable: 'not recorded by gemini', final: true, measured_at: 'x' }, DEFAULT_PRICES), 'not recorded by gemini');
    assert.equal(formatUsage(undefined, DEFAULT_PRICES), undefined);
  });

  it('.mam/prices.json overrides and adds entries; a malformed one is ignored with one warning', () => {
    const dir = tempDir('prices');
    const file = path.join(dir, 'prices.json');
    const warnings: string[] = [];
    assert.equal(loadPriceTable(file, (m) => warnings.push(m)), DEFAULT_PRICES, 'no file: the built-in table');
    fs.writeFileSync(file, JSON.stringify({ 'mam-test-*': { input: 1, output: 2 }, 'claude-sonnet-4*': { input: 6, output: 30 } }));
    const table = loadPriceTable(file, (m) => warnings.push(m));
    assert.equal(priceOf(table, 'mam-test-model')!.output, 2);
    assert.equal(priceOf(table, 'claude-sonnet-4-5')!.input, 6);
    assert.deepEqual(warnings, []);
    for (const [text, why] of [['{', /not JSON/], ['[]', /must be an object/], ['{"m": {"input": 1}}', /'m' needs output as a non-negative number/], ['{"m": {"input": 1, "output": -1}}', /needs output/], ['{"m": {"input": 1, "output": 1, "extra": 2}}', /unknown field 'extra'/]] as const) {
      fs.writeFileSync(file, text);
      const got: string[] = [];
      assert.equal(loadPriceTable(file, (m) => got.push(m)), DEFAULT_PRICES);
      assert.equal(got.length, 1);
      assert.match(got[0]!, why);
      assert.match(got[0]!, /using the built-in prices$/);
    }
  });
});

describe('usage: the job record', () => {
  const base = { id: 'j-1', session: 's', type: 'direct', role: null, state: 'completed', reason: null, created_at: '2026-01-01T00:00:00Z', updated_at: '2026-01-01T00:00:00Z', seq: 1, parent_job: null, detail: null };

  it('keeps records without usage valid, and refuses a malformed usage naming the field', () => {
    validateJobRecord(base, 'r');
    validateJobRecord({ ...base, usage: null }, 'r');
    validateJobRecord({ ...base, usage: { agent: 'gemini', unavailable: 'not recorded by gemini', final: true, measured_at: 'x' } }, 'r');
    assert.throws(() => validateJobRecord({ ...base, usage: { agent: 'claude', final: true, measured_at: 'x', input_tokens: -1 } }, 'r'), /usage input_tokens must be a non-negative integer/);
    assert.throws(() => validateJobRecord({ ...base, usage: 'lots' }, 'r'), /usage must be an object/);
  });
});
