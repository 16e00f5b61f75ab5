/**
 * Reading a do-not-call list's CSV as it streams in: one number a line, in the first column
 * (further columns are ignored; a first line that is not a number is taken as a header). Numbers
 * come out in batches as they are read, so a file of millions is never held whole; a line that
 * holds no valid E.164 number is reported with its line number (1-based) and skipped.
 */
import { E164_HINT, e164Checker } from '../lib/phone.js';
import { REPORTED_LINE_ERRORS, type LineError } from './schema.js';

/** Numbers written per statement: a million take twenty statements. */
export const IMPORT_BATCH = 50_000;

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
 * Reads `body` line by line; calls `onBatch` with each batch of valid numbers. The next batch is
 * read and checked while the last one is written, and no further: the stream is read no faster
 * than the batches are written. Answers what it read.
 */
export async function readNumbers(body: AsyncIterable<Buffer | string>, onBatch: (numbers: string[]) => Promise<void>): Promise<CsvTally> {
  const tally: CsvTally = { lines: 0, valid: 0, malformed: 0, errors: [] };
  const isE164 = e164Checker();
  let writing: Promise<void> = Promise.resolve();
  const send = async (numbers: string[]) => {
    await writing;
    writing = onBatch(numbers);
    // Seen at once if it fails (and awaited in its turn): no write left unobserved.
    writing.catch(() => undefined);
  };
  const decoder = new TextDecoder('utf-8', { fatal: true });
  let batch: string[] = [];
  let rest = '';
  /** Takes one line; answers a batch when it is full. */
  const take = (line: string): string[] | undefined => {
    tally.lines++;
    if (line.endsWith('\r')) line = line.slice(0, -1);
    const cell: string = firstCell(line);
    if (cell.length === 0) return undefined;
    if (tally.lines === 1 && looksLikeHeader(cell)) return undefined;
    if (!isE164(cell)) {
      tally.malformed++;
      if (tally.errors.length < REPORTED_LINE_ERRORS) tally.errors.push({ line: tally.lines, value: cell.slice(0, 64), message: E164_HINT });
      return undefined;
    }
    tally.valid++;
    batch.push(cell);
    if (batch.length < IMPORT_BATCH) return undefined;
    const full = batch;
    batch = [];
    return full;
  };
  try {
    for await (const chunk of body) {
      const text = rest + (typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true }));
      let start = 0;
      for (let nl = text.indexOf('\n'); nl >= 0; nl = text.indexOf('\n', start)) {
        const full = take(text.slice(start, nl));
        if (full) await send(full);
        start = nl + 1;
      }
      rest = text.slice(start);
    }
    rest += decoder.decode();
    const last = rest.length > 0 ? take(rest) : undefined;
    if (last) await send(last);
    if (batch.length > 0) await send(batch);
  } finally {
    // A body that failed half-way still waits for the write in flight, so the transaction ends after it.
    await writing.catch(() => undefined);
  }
  await writing;
  return tally;
}
