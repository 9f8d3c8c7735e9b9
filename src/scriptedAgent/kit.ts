/**
 * dist/scripted-agent-kit.js: what every scripted agent shares — the demo agent (demoAgent.ts)
 * and the test fixtures' fake agent (test/fixtures/fake-agent*.js, plain JS that requires this
 * bundle): reading keystrokes with bracketed paste, reading the job line and the brief, and
 * sending the brief's `mam event`s. The scenarios (what to do with a job) stay with each agent.
 */
import * as fs from 'node:fs';
import { parseBrief, parseJobLine, type JobLine, type ParsedBrief } from './briefReader';

export { BriefFormatError, eventArgs, parseBrief, parseJobLine, parseLoopHint, type JobLine, type LoopHint, type ParsedBrief } from './briefReader';
export { LineInput, type InputAction, type LineInputOptions } from './lineInput';
export { killRunning, run, sendEvent, type RunResult } from './programs';

/** The job a typed line names, with its brief read from disk; undefined for any other line. Throws when the brief cannot be read. */
export function readJob(text: string): { line: JobLine; brief: ParsedBrief } | undefined {
  const line = parseJobLine(text);
  return line ? { line, brief: parseBrief(fs.readFileSync(line.briefPath, 'utf8')) } : undefined;
}
