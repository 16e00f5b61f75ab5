/**
 * The source tree as data, for the architecture tests: every file under src/, its relative imports
 * (type-only ones too: they tie folders together as much as any), and the folder each belongs to.
 * A folder is a top-level entry of src/: `lib`, `leads`, ...; a file at the top (`app.ts`) is its
 * own folder (`app`), and `config.ts` with the settings modules in `config/` is one: `config`.
 */
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

export const SRC = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../../src');

export interface SourceFile {
  /** Path relative to src/, with forward slashes. */
  file: string;
  folder: string;
  text: string;
  /** Files (relative to src/) this one imports. */
  imports: string[];
}

function walk(dir: string): string[] {
  const out: string[] = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...walk(full));
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) out.push(full);
  }
  return out;
}

export function folderOf(file: string): string {
  const [first] = file.split('/');
  return file.includes('/') ? first! : first!.replace(/\.ts$/, '');
}

function resolve(from: string, spec: string): string | undefined {
  const base = path.resolve(path.dirname(from), spec);
  for (const candidate of [base.replace(/\.js$/, '.ts'), `${base}.ts`, path.join(base, 'index.ts')]) {
    if (fs.existsSync(candidate) && fs.statSync(candidate).isFile()) return candidate;
  }
  return undefined;
}

export function sourceFiles(): SourceFile[] {
  return walk(SRC)
    .sort()
    .map((full) => {
      const text = fs.readFileSync(full, 'utf8');
      const imports = ts
        .preProcessFile(text, true, true)
        .importedFiles.map((i) => i.fileName)
        .filter((spec) => spec.startsWith('.'))
        .map((spec) => resolve(full, spec))
        .filter((f): f is string => f !== undefined)
        .map((f) => path.relative(SRC, f).split(path.sep).join('/'));
      const file = path.relative(SRC, full).split(path.sep).join('/');
      return { file, folder: folderOf(file), text, imports };
    });
}

/** Imports that cross folders, as `from -> to` with the files that make each. */
export function folderEdges(files: SourceFile[]): Map<string, string[]> {
  const edges = new Map<string, string[]>();
  for (const f of files) {
    for (const target of f.imports) {
      const to = folderOf(target);
      if (to === f.folder) continue;
      const key = `${f.folder} -> ${to}`;
      edges.set(key, [...(edges.get(key) ?? []), `${f.file} -> ${target}`]);
    }
  }
  return edges;
}

/** The strongly connected groups of more than one node (Tarjan): each is a cycle. */
export function cycles(edges: Iterable<[string, string]>): string[][] {
  const next = new Map<string, string[]>();
  for (const [a, b] of edges) {
    next.set(a, [...(next.get(a) ?? []), b]);
    if (!next.has(b)) next.set(b, []);
  }
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, counter);
    low.set(v, counter++);
    stack.push(v);
    onStack.add(v);
    for (const w of next.get(v)!) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const group: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        group.push(w);
      } while (w !== v);
      if (group.length > 1) found.push(group.sort());
    }
  };
  for (const v of next.keys()) if (!index.has(v)) visit(v);
  return found;
}
