/**
 * A node:test reporter that writes one line per failed test (its file, its name under its suites,
 * and the first line of its error) to the file it is given as destination, so that the test
 * command's summary can name every failure of a long run.
 */
import path from 'node:path';

export default async function* failures(source) {
  /** The names of the suites and tests open at each depth, per file. */
  const open = new Map();
  for await (const event of source) {
    if (event.type !== 'test:start' && event.type !== 'test:fail') continue;
    const { file = '', name, nesting } = event.data;
    const stack = open.get(file) ?? [];
    stack.length = nesting;
    if (event.type === 'test:start') {
      stack.push(name);
      open.set(file, stack);
      continue;
    }
    const err = event.data.details?.error;
    // A suite fails when a test inside it fails: only the tests themselves are named.
    if (err?.failureType === 'subtestsFailed') continue;
    const cause = err?.cause ?? err;
    const why = String(cause?.message ?? cause ?? '').split('\n')[0].slice(0, 200);
    // A file that failed as a whole (it timed out or crashed) is named by its path alone.
    const where = file ? path.relative(process.cwd(), file) : '';
    const what = name === file ? where : `${where ? `${where}: ` : ''}${[...stack, name].join(' > ')}`;
    yield `${what}${why ? ` (${why})` : ''}\n`;
  }
}
