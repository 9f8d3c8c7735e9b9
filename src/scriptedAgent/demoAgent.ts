/**
 * dist/demo-agent.js: the built-in demo agent that `mam demo` runs in each session. A terminal
 * program that looks and paces like an agent TUI but is scripted, so the demo needs no account:
 *
 *   node demo-agent.js --role worker|creator|reviewer-strict|reviewer-easy [--pace fast|normal]
 *
 * It takes keystrokes in raw mode with bracketed paste, and a line `MAM job <id>: read the brief at
 * <path> and follow it exactly.` makes it read the brief and do the job its role knows (roles.ts),
 * running the brief's own event commands; keys, brief and events through the kit (kit.ts) it
 * shares with the test fixtures' fake agent. /exit, Ctrl-C or Ctrl-D leave.
 *
 * Ready sign: the sessions run with the `shell` adapter, which has no sign of its own, so MAM
 * judges readiness by output that has stopped changing. The agent therefore sets up its input
 * before it draws anything, draws its prompt only when it takes input, and never animates while
 * idle: a quiet screen always means ready. (Running it as `--agent claude` with claude's ready
 * text would have lied about the agent in every view, and dragged in claude's conversation store.)
 */
import * as fs from 'node:fs';
import { StringDecoder } from 'node:string_decoder';
import { DEMO_ROLES, type DemoRole } from '../core/demo/demoProject';
import { JobContext, style, type Pace } from './jobContext';
import { BriefFormatError, killRunning, LineInput, parseBrief, parseJobLine, type JobLine } from './kit';
import { doJob, type Outcome } from './roles';
import { ExitCode, errorMessage } from '../core/base/errors';
import { isOneOf } from '../core/base/schema';

const out = (text: string): void => void process.stdout.write(text);

function option(args: readonly string[], name: string): string | undefined {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
}

function main(args: readonly string[]): void {
  const roleArg = option(args, '--role') ?? 'worker';
  const paceArg = option(args, '--pace') ?? 'normal';
  if (!isOneOf(DEMO_ROLES, roleArg) || !isOneOf(['fast', 'normal'], paceArg)) {
    process.stderr.write(`usage: demo-agent --role ${DEMO_ROLES.join('|')} [--pace fast|normal]\n`);
    process.exit(ExitCode.usage);
  }
  const role: DemoRole = roleArg;
  const pace: Pace = paceArg;
  const name = process.env.MAM_SESSION ?? `demo ${role}`;
  const input = new LineInput();
  const decoder = new StringDecoder('utf8');
  const queue: string[] = [];
  let busy = false;

  const prompt = (): void => out(`${style.cyan('›')} `);
  const quit = (code: number, message: string): never => {
    killRunning();
    out(`\r\n${style.dim(message)}\r\n\x1b[?2004l`);
    if (process.stdin.isTTY) process.stdin.setRawMode(false);
    process.exit(code);
  };

  // Input first, then the screen: nothing typed after the prompt appears can be lost.
  if (process.stdin.isTTY) process.stdin.setRawMode(true);
  process.stdin.on('data', (chunk: Buffer) => {
    for (const action of input.feed(decoder.write(chunk))) {
      if (action.kind === 'echo') out(action.text);
      else if (action.kind === 'erase') out('\b \b');
      else if (action.kind === 'interrupt') quit(130, 'interrupted');
      else if (action.kind === 'eof') quit(0, 'bye');
      else if (action.kind === 'submit') {
        out('\r\n');
        queue.push(action.line);
        if (busy) out(style.dim('  (queued until the current job is done)\r\n'));
        void drain();
      }
    }
  });
  process.on('SIGTERM', () => quit(143, 'terminated'));
  process.on('SIGHUP', () => quit(129, 'hangup'));

  async function drain(): Promise<void> {
    if (busy) return;
    busy = true;
    while (queue.length > 0) await handle(queue.shift()!);
    busy = false;
  }

  async function handle(line: string): Promise<void> {
    const text = line.trim();
    if (text === '/exit' || text === '/quit') quit(0, 'bye');
    if (text === '') return prompt();
    const job = parseJobLine(text);
    if (!job) {
      out(`${style.dim(`I am ${name}, a scripted demo agent: I only take MAM job lines. /exit to leave.`)}\r\n`);
      return prompt();
    }
    await runJob(job);
  }

  async function runJob(line: JobLine): Promise<void> {
    out(`\r\n${style.bold('●')} ${style.bold(`MAM job ${line.jobId}`)}\r\n`);
    let ctx: JobContext;
    try {
      ctx = new JobContext(parseBrief(fs.readFileSync(line.briefPath, 'utf8')), line.briefPath, process.cwd(), pace, out);
    } catch (err) {
      // Without a readable brief there is no event command to run: all we can do is say so.
      out(`  ${style.red(`cannot read the brief: ${err instanceof BriefFormatError ? err.message : errorMessage(err)}`)}\r\n\r\n`);
      return prompt();
    }
    const hint = ctx.brief.loop;
    const firstLine = ctx.brief.task.split('\n')[0]!;
    ctx.say(style.dim(`${ctx.brief.role}${hint ? ` · loop ${hint.loop} · ${hint.step}${hint.round ? ` round ${hint.round}` : ''}` : ''} · ${firstLine.length > 72 ? `${firstLine.slice(0, 71)}…` : firstLine}`));
    await ctx.event('started', ['--heartbeat', String(ctx.brief.heartbeatS)]);
    ctx.say(`acknowledged (heartbeat every ${ctx.brief.heartbeatS} s)`);
    let outcome: Outcome;
    try {
      outcome = await doJob(role, ctx);
    } catch (err) {
      outcome = { error: errorMessage(err) };
    }
    // The last output comes before the last event: once the job has ended, the pane is quiet.
    if ('error' in outcome) ctx.say(style.red(`giving up: ${outcome.error}`));
    out('\r\n');
    prompt();
    if ('error' in outcome) await ctx.event('error', ['--detail', outcome.error]);
    else await ctx.event('completed', ['--detail', outcome.completed, ...(outcome.report ? ['--report', outcome.report] : [])]);
  }

  // A box like the agent TUIs draw; every line cut to fit it.
  const width = 64;
  const row = (text: string, shown = text): string => `${style.dim('│')} ${shown}${' '.repeat(Math.max(0, width - 1 - [...text].length))}${style.dim('│')}\r\n`;
  const fit = (text: string): string => ([...text].length > width - 1 ? `${[...text].slice(0, width - 2).join('')}…` : text);
  const title = fit(`✻ MAM demo agent · ${name}`);
  out(`\x1b[?2004h${style.dim(`╭${'─'.repeat(width)}╮`)}\r\n`);
  out(row(title, style.bold(title)));
  out(row(fit(`${role} · pace ${pace} · scripted, no account needed`)));
  out(row(fit(`cwd ${process.cwd()}`)));
  out(`${style.dim(`╰${'─'.repeat(width)}╯`)}\r\n`);
  out(`${style.dim('Ready. MAM types job lines here; /exit to leave.')}\r\n\r\n`);
  prompt();
}

main(process.argv.slice(2));
