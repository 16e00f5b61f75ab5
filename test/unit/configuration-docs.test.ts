/**
 * docs/configuration.md lists exactly the variables the code reads: the names config.ts and the
 * settings modules in src/config/ read, against the names in the page's tables.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { SRC } from '../helpers/architecture.js';

const NAME = /^[A-Z][A-Z0-9]*(_[A-Z0-9]+)*$/;

/** Names read from the environment: `env.NAME`, and quoted names (`text(env, 'NAME')`, `together(env, ['A', 'B'])`). */
function readByCode(): Set<string> {
  const files = [path.join(SRC, 'config.ts'), ...fs.readdirSync(path.join(SRC, 'config')).map((f) => path.join(SRC, 'config', f))];
  const names = new Set<string>();
  for (const file of files) {
    const text = fs.readFileSync(file, 'utf8');
    for (const m of text.matchAll(/\benv\.([A-Z][A-Z0-9_]*)\b/g)) names.add(m[1]!);
    for (const m of text.matchAll(/'([A-Z][A-Z0-9_]*)'/g)) if (NAME.test(m[1]!)) names.add(m[1]!);
  }
  return names;
}

/** Names in the first column of the page's tables. */
function documented(): Set<string> {
  const page = fs.readFileSync(path.join(SRC, '..', 'docs', 'configuration.md'), 'utf8');
  const names = new Set<string>();
  for (const line of page.split('\n')) {
    if (!line.startsWith('| `')) continue;
    const first = line.split('|')[1]!;
    for (const m of first.matchAll(/`([A-Z][A-Z0-9_]*)`/g)) names.add(m[1]!);
  }
  return names;
}

describe('docs/configuration.md', () => {
  const code = readByCode();
  const docs = documented();

  it('documents every variable the code reads', () => {
    assert.deepEqual([...code].filter((n) => !docs.has(n)).sort(), []);
  });

  it('documents no variable the code does not read', () => {
    assert.deepEqual([...docs].filter((n) => !code.has(n)).sort(), []);
  });
});
