/**
 * The `mam` entry point (dist/cli.js): a few lines that load only what the command needs —
 * dist/cli-event.js for `mam event`, which agents run once per event, and dist/cli-main.js for
 * everything else. Keeping them apart keeps both cold starts short.
 */
import * as path from 'node:path';

const io = {
  stdout: (text: string) => void process.stdout.write(text),
  stderr: (text: string) => void process.stderr.write(text),
  cwd: process.cwd(),
  env: process.env,
};
const argv = process.argv.slice(2);

const run: Promise<number> =
  argv[0] === 'event'
    ? (require(path.join(__dirname, 'cli-event.js')) as typeof import('./event')).runEventCommand(argv.slice(1), io)
    : (require(path.join(__dirname, 'cli-main.js')) as typeof import('./app')).runCli(argv, io);

run.then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`mam: internal error: ${String(err)}\n`);
    process.exitCode = 70;
  },
);
