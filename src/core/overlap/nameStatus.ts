/** Paths with git's status letter (`git diff --name-status --no-renames`: M, A, D, T). */
export type PathStatuses = ReadonlyMap<string, string>;

/** `--name-status -z` output without renames: `STATUS\0PATH\0…`. */
export function parseNameStatus(out: string): Map<string, string> {
  const fields = out.split('\0');
  const statuses = new Map<string, string>();
  for (let i = 0; i + 1 < fields.length; i += 2) if (fields[i + 1] !== '') statuses.set(fields[i + 1]!, fields[i]!);
  return statuses;
}
