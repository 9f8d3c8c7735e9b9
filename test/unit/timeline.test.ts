import { strict as assert } from 'node:assert';
import type { ReportJob, ReportModel } from '../../src/webview/reportProtocol';
import { axisFor, barSpan, barTooltip, formatDuration, loopSpan } from '../../src/webview/timeline';

const T0 = Date.parse('2026-11-30T14:03:10.000Z');
const at = (s: number) => new Date(T0 + s * 1000).toISOString();

function job(id: string, step: string, from: number, to: number | null, state = to === null ? 'started' : 'completed'): ReportJob {
  const title = step === 'implement' ? 'Implement' : `${step.includes('review') ? 'Review' : 'Fix'} · round ${step.slice(1, 2)}`;
  return { id, session: step.includes('review') ? 'loop-reviewer' : 'loop-creator', step, title, round: null, state, reason: null, dispatched_at: at(from), finished_at: to === null ? null : at(to), events: [] };
}

function model(status: string, jobs: ReportJob[], nowS: number): ReportModel {
  return {
    folderIndex: 0,
    title: 'Validate the signup form input',
    loop: { id: 'l-1', task: 'Validate the signup form input.', status, reason: null, creator: 'loop-creator', reviewers: ['loop-reviewer'], planner: null, checkout: '/repo', base: 'abc', created_at: at(0), updated_at: at(53) },
    rounds: [],
    usage: { total: null, rounds: [] },
    jobs,
    now: at(nowS),
  };
}

// The loop of the issue: 52 s of jobs, its report opened at 249 s.
const finished = model('passed', [job('j-1', 'implement', 0.4, 14), job('j-2', 'r1:review:loop-reviewer', 14.5, 25), job('j-3', 'r1:fix', 25.3, 38), job('j-4', 'r2:review:loop-reviewer', 38.2, 52)], 249);

describe('the report timeline: its axis, ticks and bar tooltips', () => {
  it('a finished loop opened later keeps its own length: the axis covers 52 s, not 249 s', () => {
    const span = loopSpan(finished);
    assert.equal(span.end - span.start, 52_000);
    assert.equal(span.running, false);
    const axis = axisFor(span.start, span.end - span.start);
    assert.ok(axis.length <= 1.3 * 52_000, `axis ${axis.length} ms`);
    assert.deepEqual(axis.ticks.map((t) => t.label), ['0 s', '10 s', '20 s', '30 s', '40 s', '50 s', '60 s']);
  });

  it('a running loop runs to now, and its open job with it', () => {
    const running = model('running', [job('j-1', 'implement', 0.4, 14), job('j-2', 'r1:review:loop-reviewer', 14.5, null)], 95);
    const span = loopSpan(running);
    assert.equal(span.end - span.start, 95_000);
    assert.equal(span.running, true);
    assert.deepEqual(barSpan(running.jobs[1]!, span), { from: T0 + 14_500, to: T0 + 95_000 });
  });

  it('a job left open in a finished loop ends with the loop, not at now', () => {
    const cancelled = model('cancelled', [job('j-1', 'implement', 0, 30), job('j-2', 'r1:review:loop-reviewer', 30, null, 'dispatched')], 4000);
    const span = loopSpan(cancelled);
    assert.equal(span.end - span.start, 30_000);
    assert.deepEqual(barSpan(cancelled.jobs[1]!, span), { from: T0 + 30_000, to: T0 + 30_000 });
  });

  it('for any duration from 4 ms to 2 days: at most 1.25 × the duration, 4 to 10 even steps of a nice size, one unit per axis', () => {
    const nice = new Set([1, 2, 5, 10, 20, 50, 100, 200, 500, 1e3, 2e3, 5e3, 10e3, 15e3, 30e3, 60e3, 120e3, 300e3, 600e3, 900e3, 1800e3, 3600e3, 7200e3, 10800e3, 21600e3, 43200e3, 86400e3]);
    for (let d = 4; d < 2 * 86_400_000; d = Math.ceil(d * 1.07)) {
      const axis = axisFor(0, d);
      assert.ok(axis.length >= d && axis.length <= 1.25 * d, `${d} ms → axis ${axis.length}`);
      assert.ok(nice.has(axis.step), `${d} ms → step ${axis.step}`);
      const intervals = axis.ticks.length - 1;
      assert.ok(intervals >= 4 && intervals <= 10, `${d} ms → ${intervals} intervals`);
      axis.ticks.forEach((t, i) => assert.equal(t.at, i * axis.step));
      assert.equal(axis.ticks.at(-1)!.at, axis.length);
      const units = new Set(axis.ticks.map((t) => (t.label.includes(':') ? 'm:ss' : t.label.split(' ')[1])));
      assert.equal(units.size, 1, `${d} ms → ${axis.ticks.map((t) => t.label).join(', ')}`);
      assert.equal(new Set(axis.ticks.map((t) => t.label)).size, axis.ticks.length, 'no two ticks alike');
    }
  });

  it('labels read as durations: tenths of a second, seconds, m:ss past two minutes, minutes, hours', () => {
    assert.deepEqual(axisFor(0, 2_300).ticks.map((t) => t.label), ['0 s', '0.5 s', '1 s', '1.5 s', '2 s', '2.5 s']);
    assert.deepEqual(axisFor(0, 200_000).ticks.map((t) => t.label), ['0:00', '0:30', '1:00', '1:30', '2:00', '2:30', '3:00', '3:30']);
    assert.deepEqual(axisFor(0, 260_000).ticks.map((t) => t.label), ['0 min', '1 min', '2 min', '3 min', '4 min', '5 min']);
    assert.deepEqual(axisFor(0, 50 * 60_000).ticks.map((t) => t.label), ['0 min', '10 min', '20 min', '30 min', '40 min', '50 min']);
    assert.deepEqual(axisFor(0, 5 * 3_600_000).ticks.map((t) => t.label), ['0 h', '1 h', '2 h', '3 h', '4 h', '5 h']);
  });

  it('a bar tooltip gives the step, session, start as offset and clock time, duration and verdict', () => {
    const span = loopSpan(finished);
    const tip = barTooltip(finished.jobs[3]!, span.start, span, 'PASS', (t) => `clock ${new Date(t).toISOString().slice(11, 19)}`);
    assert.equal(tip, ['Review · round 2', 'Session: loop-reviewer', 'Start: +38 s (clock 14:03:48)', 'Duration: 14 s', 'Verdict: PASS', 'State: completed', 'Job: j-4'].join('\n'));
    const creator = barTooltip(finished.jobs[0]!, span.start, span, undefined, () => '');
    assert.ok(!creator.includes('Verdict'), 'no verdict line for a step that gives none');
    const pending = barTooltip(job('j-5', 'r3:review:b', 10, null), span.start, { end: T0 + 20_000, running: true }, null, () => 'now');
    assert.match(pending, /Duration: 10 s, still running/);
    assert.match(pending, /Verdict: pending/);
  });

  it('durations read as a person says them', () => {
    assert.deepEqual([850, 8_440, 42_000, 185_000, 3_840_000, 7_200_000].map(formatDuration), ['850 ms', '8.4 s', '42 s', '3 min 5 s', '1 h 4 min', '2 h']);
  });
});
