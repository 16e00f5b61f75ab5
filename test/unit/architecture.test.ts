/**
 * The shape of the source tree, kept true by test: the lead's state has one writer, and files
 * stay small enough to read.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sourceFiles } from '../helpers/architecture.js';

const files = sourceFiles();

describe('architecture', () => {
  it('only the lifecycle writes a lead (UPDATE leads in at most two files, both in src/lifecycle)', () => {
    const writers = files.filter((f) => /UPDATE\s+leads\b/i.test(f.text)).map((f) => f.file);
    assert.ok(writers.length <= 2, `UPDATE leads in ${writers.join(', ')}`);
    for (const w of writers) assert.equal(w.split('/')[0], 'lifecycle', `${w} writes leads`);
  });
});
