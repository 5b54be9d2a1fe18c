// Tables as kubectl prints them: upper-case headers, columns padded to their widest cell, three spaces apart.

export interface Column<T> {
  header: string;
  value: (row: T) => string;
  /** shown only with -o wide */
  wide?: boolean;
}

export function renderTable(headers: readonly string[], rows: readonly (readonly string[])[], indent = ''): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) =>
    indent +
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i])))
      .join('   ')
      .trimEnd();
  return [line(headers.map((h) => h.toUpperCase())), ...rows.map(line)].join('\n') + '\n';
}

/** The rows under the columns `wide` selects. */
export function tableOf<T>(columns: readonly Column<T>[], rows: readonly T[], wide: boolean, indent = ''): string {
  const shown = columns.filter((c) => wide || !c.wide);
  return renderTable(
    shown.map((c) => c.header),
    rows.map((r) => shown.map((c) => c.value(r))),
    indent,
  );
}
