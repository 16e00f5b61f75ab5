/**
 * A node:test reporter that writes one line per failed test (`fail`, its file, its name under its
 * suites, and the first line of its error) and one per skipped suite (`skip`, its file, its name and
 * the reason) to the file it is given as destination, so that the test command's summary can name
 * every failure of a long run, and count the suites skipped whole (node's own counts leave them out:
 * their tests never start).
 */
import path from 'node:path';

export default async function* failures(source) {
  /** The names of the suites and tests open at each depth, per file. */
  const open = new Map();
  for await (const event of source) {
    if (event.type !== 'test:start' && event.type !== 'test:fail' && event.type !== 'test:pass') continue;
    const { file = '', name, nesting } = event.data;
    const stack = open.get(file) ?? [];
    stack.length = nesting;
    if (event.type === 'test:start') {
      stack.push(name);
      open.set(file, stack);
      continue;
    }
    // A skipped test is in node's counts already; a skipped suite is not.
    if (event.type === 'test:pass') {
      if (event.data.skip === undefined || event.data.details?.type !== 'suite') continue;
      yield `skip\t${named(file, stack, name)}${event.data.skip === true ? '' : ` (${event.data.skip})`}\n`;
      continue;
    }
    const err = event.data.details?.error;
    // A suite fails when a test inside it fails: only the tests themselves are named.
    if (err?.failureType === 'subtestsFailed') continue;
    const cause = err?.cause ?? err;
    const why = String(cause?.message ?? cause ?? '').split('\n')[0].slice(0, 200);
    yield `fail\t${named(file, stack, name)}${why ? ` (${why})` : ''}\n`;
  }
}

/** A test or suite by its file and its name under its suites; a file that failed as a whole (it timed out or crashed) by its path alone. */
function named(file, stack, name) {
  const where = file ? path.relative(process.cwd(), file) : '';
  return name === file ? where : `${where ? `${where}: ` : ''}${[...stack, name].join(' > ')}`;
}
