/** The `mam` entry point (dist/cli.js): boot.ts loads only what the command needs. */
import { boot } from './boot';

boot(process.argv.slice(2));
