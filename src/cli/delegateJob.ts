/**
 * `multi-agent-mux-delegate-job` (dist/delegate-job.js): the seeds' command for jobs, installed
 * beside `mam`. Its subcommands are `mam job`'s — seed 004's `submit`, `status --job ID`,
 * `logs ID`, `list`, `verify --job ID --validate CMD`, and `wait`, `cancel` — with the seeds' flag
 * names (`--agent-session`, `--reviewer-session`, `--agent human`, …) and the same exit codes.
 */
import { boot, runMam } from './boot';
import type { CliIo } from './command';

const PROGRAM = 'multi-agent-mux-delegate-job';

boot(process.argv.slice(2), async (io, argv) => {
  const first = argv[0];
  if (first === undefined || first === '--help' || first === '-h' || first === 'help') {
    io.stdout(`${PROGRAM} — the seeds' command for MAM jobs: '${PROGRAM} COMMAND …' runs 'mam job COMMAND …'\n\n`);
    const code = await runMam(renamed(io), ['job', '--help']);
    return first === undefined ? 64 : code;
  }
  if (first === '--version' || first === '-V') return runMam(io, ['--version']);
  return runMam(renamed(io, argv.includes('--help') || argv.includes('-h')), ['job', ...argv]);
});

/** Help and errors name the command as it was typed (a job's own text, printed as data, is left as it is). */
function renamed(io: CliIo, help = true): CliIo {
  const rename = (text: string): string => text.replace(/\bmam job\b/g, PROGRAM);
  return { ...io, stdout: (t) => io.stdout(help ? rename(t) : t), stderr: (t) => io.stderr(rename(t)) };
}
