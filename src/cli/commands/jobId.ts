import { UsageError } from '../../core/base/errors';
import type { OptionSpecs, PositionalSpec } from '../args';
import type { CommandContext } from '../command';

/** A job named as an argument (`mam job status ID`) or, as the seeds wrote it, with `--job ID`. */
export const JOB_ID: readonly PositionalSpec[] = [{ name: 'job', description: 'the job ID (or --job ID)' }];
export const JOB_OPTION = { job: { kind: 'string', value: 'ID', description: 'the job ID (instead of JOB)' } } as const satisfies OptionSpecs;

/** The job ID given either way; both at once, or neither, is a usage error. */
export function jobIdArg(ctx: CommandContext<typeof JOB_OPTION>, subcommand: string): string {
  const flag = ctx.args.options.job;
  const positional = ctx.args.positionals[0];
  const command = `mam job ${subcommand}`;
  if (flag !== undefined && positional !== undefined) throw new UsageError(`${command}: give the job ID once: either as an argument or with --job`);
  const id = flag ?? positional;
  if (id === undefined) throw new UsageError(`${command}: missing JOB (or --job ID); see '${command} --help'`);
  return id;
}
