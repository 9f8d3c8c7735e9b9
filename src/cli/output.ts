/** Renders rows as an aligned text table; `columns` are [header, value-of-row] pairs. */
export function table<T>(rows: readonly T[], columns: ReadonlyArray<[string, (row: T) => string]>): string[] {
  const cells = rows.map((row) => columns.map(([, get]) => oneLine(get(row))));
  const widths = columns.map(([header], i) => Math.max(header.length, ...cells.map((c) => [...c[i]!].length)));
  const render = (values: string[]): string =>
    values.map((v, i) => (i === values.length - 1 ? v : v + ' '.repeat(widths[i]! - [...v].length))).join('  ').trimEnd();
  return [render(columns.map(([header]) => header)), ...cells.map(render)];
}

/** "3s", "5m", "2h", "4d": how long ago (or how long), for tables. */
export function duration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m`;
  if (s < 86400) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86400)}d`;
}

export function since(iso: string | null | undefined, now = Date.now()): string {
  if (!iso) return '-';
  const t = Date.parse(iso);
  return Number.isNaN(t) ? '-' : duration(now - t);
}

export function dash(value: unknown): string {
  return value === null || value === undefined || value === '' ? '-' : String(value);
}

function oneLine(text: string): string {
  return text.replace(/[\r\n\t]+/g, ' ');
}
