/**
 * The dashboard's bundle: web/src compiled by esbuild inside the process, on first use, and kept in
 * memory. No build step to remember and nothing to ship besides `npm install`: `npm start`,
 * `dialer serve` and the tests all serve what web/ holds now. Each file is named by its content
 * hash (cached for a year by browsers); each screen is its own chunk, loaded when first shown.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import type { Plugin } from 'esbuild';

export const WEB_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../web');
const SRC_DIR = path.resolve(WEB_DIR, '../src');

export interface Asset {
  body: Buffer;
  gzip: Buffer;
  contentType: string;
}

export interface Bundle {
  /** By file name (with its hash), as served under assets/. */
  assets: ReadonlyMap<string, Asset>;
  /** The entry script and style sheet the page loads first. */
  entry: { script: string; styles: string[]; preload: string[] };
  /** Bytes of JavaScript the first screen loads, gzipped (entry and the chunks it imports statically). */
  firstScreenGzipBytes: number;
}

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.map': 'application/json',
};

/**
 * Server modules the dashboard shares (the flow validator, TypeBox schemas, calling windows)
 * import the HTTP layer's door for its schema helpers only: point that door at the helpers, so
 * that no server plumbing (Fastify, Ajv, files on disk) is pulled into the browser.
 */
const serverSchemasOnly: Plugin = {
  name: 'server-schemas-only',
  setup(build) {
    build.onResolve({ filter: /\/http\/index\.js$/ }, (args) => {
      if (!args.importer.startsWith(SRC_DIR)) return undefined;
      return { path: path.join(SRC_DIR, 'http', 'schemas.ts') };
    });
    // The calling-window helpers the configurations screen shares sit beside the server's lookup of
    // a number's time zone (a data file read from disk); the screen never asks a number's zone.
    build.onResolve({ filter: /\/phone-zone\.js$/ }, (args) => (args.importer.startsWith(SRC_DIR) ? { path: 'phone-zone', namespace: 'server-only' } : undefined));
    build.onLoad({ filter: /.*/, namespace: 'server-only' }, () => ({ contents: 'export function numberZone() { return undefined; }', loader: 'js' }));
  },
};

export class DashboardBundle {
  private building: Promise<Bundle> | undefined;
  private static instance: DashboardBundle | undefined;

  constructor(private readonly webDir = WEB_DIR) {}

  /** One bundle per process: every app built in it serves the same files. */
  static shared(): DashboardBundle {
    return (DashboardBundle.instance ??= new DashboardBundle());
  }

  /** The bundle, built on the first call (concurrent callers share the build); a failed build is retried on the next call. */
  get(): Promise<Bundle> {
    this.building ??= build(this.webDir).catch((err: unknown) => {
      this.building = undefined;
      throw err;
    });
    return this.building;
  }
}

async function build(webDir: string): Promise<Bundle> {
  const esbuild = await import('esbuild');
  const outdir = path.join(webDir, 'out');
  const result = await esbuild.build({
    entryPoints: { main: path.join(webDir, 'src', 'main.tsx') },
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'browser',
    target: ['chrome120', 'firefox121', 'safari17'],
    // Minified for the browser, esbuild also builds the libraries' production branches (their NODE_ENV checks).
    minify: true,
    write: false,
    metafile: true,
    outdir,
    entryNames: '[name]-[hash]',
    chunkNames: '[name]-[hash]',
    assetNames: '[name]-[hash]',
    jsx: 'automatic',
    jsxImportSource: 'preact',
    tsconfig: path.join(webDir, 'tsconfig.json'),
    legalComments: 'none',
    logLevel: 'silent',
    plugins: [serverSchemasOnly],
  });
  const assets = new Map<string, Asset>();
  for (const file of result.outputFiles) {
    const name = path.relative(outdir, file.path).split(path.sep).join('/');
    const body = Buffer.from(file.contents);
    assets.set(name, { body, gzip: gzipSync(body, { level: 9 }), contentType: TYPES[path.extname(name)] ?? 'application/octet-stream' });
  }
  const outputs = result.metafile.outputs;
  const entryKey = Object.keys(outputs).find((k) => outputs[k]!.entryPoint?.endsWith('src/main.tsx'))!;
  const entry = outputs[entryKey]!;
  const rel = (k: string) => path.relative(outdir, path.resolve(k)).split(path.sep).join('/');
  // The chunks the entry imports statically load with it: preload them, and count them as the first screen.
  const statics = new Set<string>();
  const visit = (key: string) => {
    for (const imp of outputs[key]?.imports ?? []) {
      if (imp.kind !== 'import-statement' || statics.has(imp.path)) continue;
      statics.add(imp.path);
      visit(imp.path);
    }
  };
  visit(entryKey);
  const styles = entry.cssBundle ? [rel(entry.cssBundle)] : [];
  const firstScreenGzipBytes = [entryKey, ...statics].reduce((n, k) => n + (assets.get(rel(k))?.gzip.length ?? 0), 0);
  return { assets, entry: { script: rel(entryKey), styles, preload: [...statics].map(rel) }, firstScreenGzipBytes };
}
