/**
 * HTTP Range requests on a recording (RFC 9110 section 14): a single `bytes=` range. A header that
 * is malformed, of another unit, or asks for several ranges is ignored (the whole file is sent),
 * which RFC 9110 allows; a well-formed range that no byte satisfies answers 416.
 */

export type RequestedRange = { start: number; end?: number } | { suffix: number };

/** Reads a Range header; undefined when there is none or it is to be ignored. */
export function parseRangeHeader(header: string | string[] | undefined): RequestedRange | undefined {
  if (typeof header !== 'string') return undefined;
  const m = /^\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*$/i.exec(header);
  if (!m) return undefined;
  const [, first, last] = m as unknown as [string, string, string];
  if (first === '' && last === '') return undefined;
  if (first.length > 15 || last.length > 15) return undefined;
  if (first === '') return { suffix: Number(last) };
  const start = Number(first);
  if (last === '') return { start };
  const end = Number(last);
  return end < start ? undefined : { start, end };
}

/** The inclusive byte span a range selects in a file of `size` bytes; undefined when unsatisfiable. */
export function resolveRange(range: RequestedRange, size: number): { start: number; end: number } | undefined {
  if ('suffix' in range) {
    if (range.suffix === 0 || size === 0) return undefined;
    return { start: Math.max(0, size - range.suffix), end: size - 1 };
  }
  if (range.start >= size) return undefined;
  return { start: range.start, end: Math.min(range.end ?? size - 1, size - 1) };
}
