// `describe` output as kubectl lays it out: aligned "Key:  value" fields, then titled sections holding more
// fields, a table or lines of text. Commands build the sections; this only lays them out.
import { renderTable } from './table.ts';

export type Field = readonly [label: string, value: string | number | undefined];

export interface Section {
  title: string;
  fields?: readonly Field[];
  table?: { headers: readonly string[]; rows: readonly (readonly string[])[] };
  lines?: readonly string[];
  /** said when the section has nothing, e.g. "<none>" */
  empty?: string;
}

function fieldLines(fields: readonly Field[], indent: string): string[] {
  const shown = fields.filter(([, v]) => v !== undefined && v !== '');
  const width = Math.max(0, ...shown.map(([k]) => k.length + 1));
  return shown.map(([k, v]) => `${indent}${`${k}:`.padEnd(width)}  ${v}`);
}

function sectionLines(s: Section): string[] {
  const body: string[] = [];
  if (s.fields) body.push(...fieldLines(s.fields, '  '));
  if (s.table && s.table.rows.length > 0)
    body.push(...renderTable(s.table.headers, s.table.rows, '  ').trimEnd().split('\n'));
  if (s.lines) body.push(...s.lines.map((l) => `  ${l}`));
  if (body.length === 0) return [`${s.title}:  ${s.empty ?? '<none>'}`];
  return [`${s.title}:`, ...body];
}

/** The top fields, then each section. */
export function renderDescribe(top: readonly Field[], sections: readonly Section[]): string {
  return [...fieldLines(top, ''), ...sections.flatMap(sectionLines)].join('\n') + '\n';
}
