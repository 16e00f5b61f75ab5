/**
 * `npm test` itself (scripts/test.ts) on files that would stall node's test runner: one whose test
 * leaves a timer running (its process would never exit), one whose clean-up never returns. The
 * first passes and ends; the second fails, named, once the file timeout is over; the run ends
 * either way and says so in its summary, which names every failed test. A setting that is not a whole number stops it at once.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { describe, it } from 'node:test';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
const fixture = (name: string) => path.join('test', 'fixtures', 'test-command', name);

/** Runs the test command on `files` (PGlite only: nothing to provision but the voice); its exit code and output. */
function npmTest(files: string[], settings: Record<string, string> = {}): Promise<{ code: number; out: string }> {
  // Without the variable node's runner sets for its files: with it, a nested runner runs nothing.
  const { NODE_TEST_CONTEXT: _nested, ...env } = process.env;
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', 'scripts/test.ts', ...files],
      { cwd: root, env: { ...env, DIALER_TEST_BACKENDS: 'pglite', DIALER_TEST_FILE_TIMEOUT_MS: '5000', ...settings }, timeout: 120_000 },
      (err, stdout, stderr) => resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, out: stdout + stderr }),
    );
  });
}

describe('the test command', { timeout: 180_000 }, () => {
  it('ends a file whose tests are done even if it left a timer running', async () => {
    const { code, out } = await npmTest([fixture('leaves-a-timer.test.ts')]);
    assert.equal(code, 0, out);
    assert.match(out, /✔ passes and leaves a timer running/);
    assert.match(out, /^1 passed, 0 failed, 0 skipped$/m);
  });

  it('fails a file still running after the file timeout, named, and goes on to the next', async () => {
    const { code, out } = await npmTest([fixture('never-ends.test.ts'), fixture('leaves-a-timer.test.ts')]);
    assert.equal(code, 1, out);
    assert.match(out, /never-ends\.test\.ts/);
    assert.match(out, /timed out after 5000ms/);
    assert.match(out, /✔ passes and leaves a timer running/);
    assert.match(out, /^\d+ passed, [1-9]\d* failed, 0 skipped$/m);
  });

  it('names every failed test in its summary, with its file, its suites and why', async () => {
    const { code, out } = await npmTest([fixture('fails.test.ts'), fixture('never-ends.test.ts')]);
    assert.equal(code, 1, out);
    const summary = out.slice(out.lastIndexOf('npm test: failed tests:'));
    assert.match(summary, /PGlite: test\/fixtures\/test-command\/fails\.test\.ts: a suite > fails on purpose \(one is not two\)/);
    assert.match(summary, /PGlite: test\/fixtures\/test-command\/never-ends\.test\.ts \(test timed out after 5000ms\)/);
    assert.doesNotMatch(summary, /> passes/);
    assert.match(summary, /^\d+ passed, 2 failed, 0 skipped$/m);
  });

  it('refuses a setting that is not a whole number above 0, naming it, before running anything', async () => {
    for (const [name, value] of [['DIALER_TEST_FILE_TIMEOUT_MS', '10m'], ['DIALER_TEST_FILE_TIMEOUT_MS', '-5'], ['DIALER_TEST_CONCURRENCY', '0']] as const) {
      const { code, out } = await npmTest([fixture('leaves-a-timer.test.ts')], { [name]: value });
      assert.equal(code, 2, out);
      assert.match(out, new RegExp(`npm test: ${name} must be a whole number above 0 \\(it is "${value}"\\)`));
      assert.doesNotMatch(out, /passes and leaves a timer running/);
    }
  });
});
