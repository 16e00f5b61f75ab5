/**
 * Reading a do-not-call list's CSV as it streams in: one number a line, in the first column
 * (further columns are ignored; a first line that is not a number is taken as a header). Numbers
 * come out in batches as they are read, so a file of millions is never held whole; a line that
 * holds no valid E.164 number is reported with its line number (1-based) and skipped.
 */
import { E164_HINT, isE164 } from '../lib/phone.js';
import { REPORTED_LINE_ERRORS, type LineError } from './schema.js';

/** Numbers written per statement: large enough that a million take a few hundred round trips. */
export const IMPORT_BATCH = 10_000;

export interface CsvTally {
  lines: number;
  valid: number;
  malformed: number;
  errors: LineError[];
}

function firstCell(line: string): string {
  const comma = line.indexOf(',');
  let cell = (comma < 0 ? line : line.slice(0, comma)).trim();
  if (cell.length >= 2 && cell.startsWith('"') && cell.endsWith('"')) cell = cell.slice(1, -1).trim();
  return cell;
}

const looksLikeHeader = (cell: string) => !/^[+\d]/.test(cell);

/**
 * Reads `body` line by line; calls `onBatch` with each batch of valid numbers (awaited, so the
 * stream is read no faster than the batches are written). Answers what it read.
 */
export async function readNumbers(body: AsyncIterable<Buffer | string>, onBatch: (numbers: string[]) => Promise<void>): Promise<CsvTally> {
  const tally: CsvTally = { lines: 0, valid: 0, malformed: 0, errors: [] };
  const decoder = new TextDecoder('utf-8', { fatal: true });
  let batch: string[] = [];
  let rest = '';
  const take = async (line: string) => {
    tally.lines++;
    if (line.endsWith('\r')) line = line.slice(0, -1);
    const cell: string = firstCell(line);
    const shown = cell.slice(0, 64);
    if (cell.length === 0) return;
    if (tally.lines === 1 && looksLikeHeader(cell)) return;
    if (!isE164(cell)) {
      tally.malformed++;
      if (tally.errors.length < REPORTED_LINE_ERRORS) tally.errors.push({ line: tally.lines, value: shown, message: E164_HINT });
      return;
    }
    tally.valid++;
    batch.push(cell);
    if (batch.length >= IMPORT_BATCH) {
      const full = batch;
      batch = [];
      await onBatch(full);
    }
  };
  for await (const chunk of body) {
    const text = rest + (typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true }));
    let start = 0;
    for (let nl = text.indexOf('\n'); nl >= 0; nl = text.indexOf('\n', start)) {
      await take(text.slice(start, nl));
      start = nl + 1;
    }
    rest = text.slice(start);
  }
  rest += decoder.decode();
  if (rest.length > 0) await take(rest);
  if (batch.length > 0) await onBatch(batch);
  return tally;
}
