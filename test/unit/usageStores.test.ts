import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { ConversationEntry } from '../../src/core/usage/conversation';
import { readCopilotEvents } from '../../src/core/usage/copilotStore';
import { readGeminiConversation } from '../../src/core/usage/geminiStore';
import { readGrokUpdates } from '../../src/core/usage/grokStore';
import { readOpencodeMessages } from '../../src/core/usage/opencodeStore';
import { readQwenConversation } from '../../src/core/usage/qwenStore';
import { sumJobWindow } from '../../src/core/usage/window';
import { tempDir } from '../support/helpers';

/**
 * The stores of gemini 0.61.0, qwen 0.15.10, copilot 1.0.102, opencode 1.18.33 and grok 1.0.41 as each wrote
 * them (test/fixtures/usage/README.md): two jobs per CLI in one conversation, and what the model
 * server returned for every request — the truth the readers are checked against. The server
 * returns a few reasoning (thinking) tokens with every answer, so where each CLI keeps them is
 * checked too.
 */
const FIXTURES = path.join(__dirname, '../fixtures/usage');
type Agent = 'gemini' | 'qwen' | 'copilot' | 'opencode' | 'grok';
interface FixtureJob { id: string; session: Agent; finished_at: string }
const JOBS = JSON.parse(fs.readFileSync(path.join(FIXTURES, 'jobs-more.json'), 'utf8')) as FixtureJob[];
const FILES: Record<Agent, string> = {
  gemini: path.join(FIXTURES, 'gemini-0.61.0.jsonl'),
  qwen: path.join(FIXTURES, 'qwen-0.15.10.jsonl'),
  copilot: path.join(FIXTURES, 'copilot-1.0.102.jsonl'),
  opencode: path.join(FIXTURES, 'opencode-1.18.33.json'),
  grok: path.join(FIXTURES, 'grok-1.0.41.jsonl'),
};
const lines = (file: string): string[] => fs.readFileSync(file, 'utf8').split('\n').filter(Boolean);

function read(agent: Agent, file = FILES[agent]): ConversationEntry[] {
  switch (agent) {
    case 'gemini':
      return readGeminiConversation([file]);
    case 'qwen':
      return readQwenConversation(file);
    case 'copilot':
      return readCopilotEvents(file);
    case 'opencode':
      return readOpencodeMessages(JSON.parse(fs.readFileSync(file, 'utf8')) as unknown);
    case 'grok':
      return readGrokUpdates(file);
  }
}

/** What the model server returned for a job's requests, in MAM's terms (input with cached, output with reasoning). */
function served(jobId: string) {
  const sum = { input_tokens: 0, cached_input_tokens: 0, output_tokens: 0, reasoning_output_tokens: 0, requests: 0 };
  for (const l of lines(path.join(FIXTURES, 'model-server-usage-more.jsonl'))) {
    const e = JSON.parse(l) as { api: string; job: string | null; usage: Record<string, number> & { prompt_tokens_details?: { cached_tokens: number }; completion_tokens_details?: { reasoning_tokens: number } } };
    if (e.job !== jobId) continue;
    const u = e.usage;
    sum.requests++;
    if (e.api === 'gemini') {
      sum.input_tokens += u.promptTokenCount! + (u.toolUsePromptTokenCount ?? 0);
      sum.cached_input_tokens += u.cachedContentTokenCount ?? 0;
      sum.output_tokens += u.candidatesTokenCount! + (u.thoughtsTokenCount ?? 0);
      sum.reasoning_output_tokens += u.thoughtsTokenCount ?? 0;
    } else {
      sum.input_tokens += u.prompt_tokens!;
      sum.cached_input_tokens += u.prompt_tokens_details!.cached_tokens;
      sum.output_tokens += u.completion_tokens!;
      sum.reasoning_output_tokens += u.completion_tokens_details!.reasoning_tokens;
    }
  }
  return sum;
}

const ended = (job: FixtureJob) => Date.parse(job.finished_at);

describe('usage: token sums from gemini\'s, qwen\'s, copilot\'s, opencode\'s and grok\'s real stores', () => {
  it('the fixtures are what they claim: two jobs per CLI, every answer with reasoning tokens', () => {
    assert.deepEqual(JOBS.map((j) => j.session), ['gemini', 'gemini', 'qwen', 'qwen', 'copilot', 'copilot', 'opencode', 'opencode', 'grok', 'grok']);
    for (const job of JOBS) assert.ok(served(job.id).reasoning_output_tokens > 0);
  });

  for (const job of JOBS) {
    it(`${job.session}, job ${job.id.slice(-8)}: the sum equals what the model server returned for the job's requests`, () => {
      const sum = sumJobWindow(read(job.session), job.id, ended(job))!;
      const want = served(job.id);
      assert.ok(want.requests >= 3);
      assert.deepEqual(
        { input: sum.totals.input_tokens, cached: sum.totals.cached_input_tokens, output: sum.totals.output_tokens, reasoning: sum.totals.reasoning_output_tokens, requests: sum.requests, closed: sum.closed },
        { input: want.input_tokens, cached: want.cached_input_tokens, output: want.output_tokens, reasoning: want.reasoning_output_tokens, requests: want.requests, closed: true },
      );
      assert.equal(sum.totals.cache_write_input_tokens, ['copilot', 'opencode', 'grok'].includes(job.session) ? 0 : null, 'a cache write count only where the store keeps one');
      assert.deepEqual(Object.keys(sum.models), ['mam-test-model']);
    });
  }

  for (const agent of ['gemini', 'qwen', 'copilot', 'opencode', 'grok'] as const) {
    const [first, second] = JOBS.filter((j) => j.session === agent) as [FixtureJob, FixtureJob];

    it(`${agent}: the window stops at the next job's line, even when the job's end is not known; an open job's stays open`, () => {
      const sum = sumJobWindow(read(agent), first.id, null)!;
      assert.equal(sum.requests, served(first.id).requests);
      assert.equal(sum.closed, true);
      assert.equal(sumJobWindow(read(agent), second.id, null)!.closed, false);
    });

    if (agent === 'grok') {
      it('grok: a turn\'s totals come when it ends, after the job\'s `completed`; until then the reading is empty and open', () => {
        const all = read(agent);
        const lastCall = all.map((e) => e.kind === 'call').lastIndexOf(true);
        assert.ok((all[lastCall]!.at ?? 0) > ended(second), 'the turn ended after the job did');
        const before = sumJobWindow(all.slice(0, lastCall), second.id, ended(second))!;
        assert.deepEqual([before.requests, before.closed], [0, false]);
        assert.equal(sumJobWindow(all, second.id, ended(second))!.closed, true);
      });
    } else it(`${agent}: the final message, written after the job ended, is counted; before it is written the reading is not final`, () => {
      const all = read(agent);
      const lastCall = all.map((e) => e.kind === 'call').lastIndexOf(true);
      const cut = all.slice(0, lastCall);
      assert.ok((all[lastCall]!.at ?? 0) > ended(second), 'the store wrote the final message after the job ended');
      const before = sumJobWindow(cut, second.id, ended(second))!;
      const after = sumJobWindow(all, second.id, ended(second))!;
      assert.equal(before.closed, false);
      assert.equal(before.requests, after.requests - 1);
      assert.equal(after.closed, true);
    });

    if (agent !== 'opencode') {
      it(`${agent}: a torn last line and foreign lines change nothing`, () => {
        const file = path.join(tempDir('usage'), 'store.jsonl');
        const all = lines(FILES[agent]);
        const foreign = ['{"type":"something-new","data":{"usage":{}}}', 'not json at all', '[1,2,3]', '{"type":"assistant","message":"a string"}', '{"type":"gemini","id":"x"}'];
        fs.writeFileSync(file, `${[...all.slice(0, 3), ...foreign, ...all.slice(3)].join('\n')}\n${all[all.length - 1]!.slice(0, 40)}`);
        for (const job of [first, second]) assert.deepEqual(sumJobWindow(read(agent, file), job.id, ended(job)), sumJobWindow(read(agent), job.id, ended(job)));
      });
    }
  }

  it('gemini: a record written again (its reply gets its tool calls) counts once; a resumed conversation\'s second file is read with the first', () => {
    const ids = lines(FILES.gemini).map((l) => JSON.parse(l) as { type?: string; id?: string }).filter((r) => r.type === 'gemini').map((r) => r.id);
    assert.ok(ids.length > new Set(ids).size, 'some reply is written twice');
    // Split the conversation after the first job, as a resume does: the same session in two files.
    const all = lines(FILES.gemini);
    const at = all.findIndex((l) => l.includes(`MAM job ${JOBS[1]!.id}`));
    const dir = tempDir('gemini');
    const [a, b] = [path.join(dir, 'session-a.jsonl'), path.join(dir, 'session-b.jsonl')];
    fs.writeFileSync(a, `${all.slice(0, at).join('\n')}\n`);
    fs.writeFileSync(b, `${[all[0]!, ...all.slice(at)].join('\n')}\n`);
    assert.deepEqual(readGeminiConversation([a, b]), read('gemini'));
  });
});
