/**
 * The `mam` entry point. `mam event`, which agents run once per event, is served from this small
 * bundle; every other command loads the full CLI (dist/cli-main.js) first.
 */
import * as path from 'node:path';
import { runEventCommand } from './event';

const io = {
  stdout: (text: string) => void process.stdout.write(text),
  stderr: (text: string) => void process.stderr.write(text),
  cwd: process.cwd(),
  env: process.env,
};
const argv = process.argv.slice(2);

const run: Promise<number> =
  argv[0] === 'event'
    ? runEventCommand(argv.slice(1), io)
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
