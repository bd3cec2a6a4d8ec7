/** A Markdown table cell: pipes escaped, one line. */
export const cell = (text: string) => text.replaceAll('|', '\\|').replaceAll('\n', ' ');

/** A Markdown table of `header` and `rows`, cells escaped. */
export function table(header: string[], rows: string[][]): string[] {
  return [
    `| ${header.join(' | ')} |`,
    `| ${header.map(() => '---').join(' | ')} |`,
    ...rows.map((row) => `| ${row.map(cell).join(' | ')} |`),
  ];
}
