/**
 * Writing CSV (RFC 4180): a cell is quoted when it must be, and a text that starts like a formula
 * (=, +, -, @) is defused with a leading quote so spreadsheets do not run it. Pure: the dashboard
 * writes its CSV files with it too.
 */
export function csvCell(value: unknown): string {
  if (value === null || value === undefined) return '';
  let text = String(value);
  if (/^[=+\-@\t\r]/.test(text) && !/^[+-]?\d/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export function csvLine(cells: readonly unknown[]): string {
  return cells.map(csvCell).join(',');
}
