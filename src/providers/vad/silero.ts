/**
 * Silero VAD v5 (the ONNX model shipped in @ricky0123/vad-web, MIT), run with ONNX Runtime: the
 * native CPU build (onnxruntime-node, whose binaries come inside its npm package; nothing is
 * downloaded: .npmrc skips its optional CUDA fetch) when it loads, else the WebAssembly build
 * (onnxruntime-web). SILERO_RUNTIME=native|wasm forces one. One model session serves every call;
 * each stream keeps its own recurrent state. It hears 16 kHz or 8 kHz audio as it comes (telephony
 * needs no resampling): windows of 512 or 256 samples (32 ms), each with the 64 or 32 samples before
 * it as context, as Silero's own wrapper feeds them, batched across calls. Windows of near-digital
 * silence skip inference (a phone line's silence costs nothing), counting as probability 0.
 *
 * Why native first: a batched window costs about 0.05 ms there against 0.2-0.3 ms in WebAssembly.
 * Both builds run a batch synchronously on the event loop that carries every call's media
 * (onnxruntime-node calls its binding from a setImmediate), so batches stay a few ms long.
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type * as OrtWeb from 'onnxruntime-web';

import { VAD_DEFAULTS, type VAD, type VadEvent, type VadOptions, type VadStream } from '../../voice/services.js';

/** Per rate the model takes: samples per window and of context before it. */
const SHAPES = { 16000: { window: 512, context: 64 }, 8000: { window: 256, context: 32 } } as const;
type Rate = keyof typeof SHAPES;
const RATES: readonly number[] = [16000, 8000];
const WINDOW_MS = 32;
/** RMS below which a window is taken as silence without running the model. */
const SILENCE_RMS = 60;

/** Both builds share onnxruntime-common's API. */
type Ort = typeof OrtWeb;
export type SileroRuntime = 'native' | 'wasm';

interface Model {
  runtime: SileroRuntime;
  ort: Ort;
  session: OrtWeb.InferenceSession;
}

const models = new Map<string, Promise<Model>>();

function modelBytes(): Buffer {
  const require = createRequire(import.meta.url);
  const dist = path.dirname(require.resolve('@ricky0123/vad-web/dist/silero_vad_v5.onnx'));
  return fs.readFileSync(path.join(dist, 'silero_vad_v5.onnx'));
}

async function createModel(want: SileroRuntime | 'auto'): Promise<Model> {
  if (want !== 'wasm') {
    try {
      const ort = (await import('onnxruntime-node')) as unknown as Ort;
      // One thread per run: runs are already batched across calls, and the CPU is the calls' too.
      const session = await ort.InferenceSession.create(modelBytes(), { executionProviders: ['cpu'], intraOpNumThreads: 1, interOpNumThreads: 1 } as OrtWeb.InferenceSession.SessionOptions);
      return { runtime: 'native', ort, session };
    } catch (err) {
      if (want === 'native') throw new Error(`Silero VAD: the native ONNX Runtime (onnxruntime-node) did not load: ${(err as Error).message}`, { cause: err });
    }
  }
  const ort = await import('onnxruntime-web');
  ort.env.wasm.numThreads = 1;
  ort.env.logLevel = 'error';
  return { runtime: 'wasm', ort, session: await ort.InferenceSession.create(modelBytes(), { executionProviders: ['wasm'] }) };
}

function loadModel(want: SileroRuntime | 'auto'): Promise<Model> {
  let model = models.get(want);
  if (!model) {
    model = createModel(want);
    model.catch(() => models.delete(want));
    models.set(want, model);
  }
  return model;
}

/**
 * Windows from all calls that are ready together run as one batch ([B, 512] with the calls'
 * recurrent states side by side): a small model's cost is mostly per run, so a batch of 10 costs
 * about a sixth per window of 10 single runs.
 */
class Batcher {
  private queue: Array<{ window: Float32Array; state: Float32Array; resolve: (p: number) => void; reject: (e: unknown) => void }> = [];
  private scheduled = false;
  private readonly sr: OrtWeb.Tensor;
  /** Context plus window: the model's input per stream. */
  private readonly width: number;
  /**
   * A run blocks the event loop: batches are sized so that one takes about 3-5 ms (16 windows in
   * WebAssembly, 64 natively), so media in between is not held up.
   */
  private readonly maxBatch: number;

  constructor(private readonly model: Model, rate: Rate) {
    this.sr = new model.ort.Tensor('int64', BigInt64Array.from([BigInt(rate)]), []);
    this.width = SHAPES[rate].window + SHAPES[rate].context;
    this.maxBatch = model.runtime === 'native' ? 64 : 16;
  }

  /** Probability of speech in `window` (context included); `state` (2 x 128) is read and updated in place. */
  infer(window: Float32Array, state: Float32Array): Promise<number> {
    return new Promise((resolve, reject) => {
      this.queue.push({ window, state, resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => void this.run());
      }
    });
  }

  private async run(): Promise<void> {
    const batch = this.queue.splice(0, this.maxBatch);
    const b = batch.length;
    const width = this.width;
    const input = new Float32Array(b * width);
    const state = new Float32Array(2 * b * 128);
    batch.forEach((item, i) => {
      input.set(item.window, i * width);
      state.set(item.state.subarray(0, 128), i * 128);
      state.set(item.state.subarray(128), (b + i) * 128);
    });
    try {
      const { ort, session } = this.model;
      const out = await session.run({ input: new ort.Tensor('float32', input, [b, width]), state: new ort.Tensor('float32', state, [2, b, 128]), sr: this.sr });
      const probs = out.output!.data as Float32Array;
      const next = out.stateN!.data as Float32Array;
      batch.forEach((item, i) => {
        item.state.set(next.subarray(i * 128, (i + 1) * 128), 0);
        item.state.set(next.subarray((b + i) * 128, (b + i + 1) * 128), 128);
        item.resolve(probs[i]!);
      });
    } catch (err) {
      for (const item of batch) item.reject(err);
    }
    if (this.queue.length > 0) setImmediate(() => void this.run());
    else this.scheduled = false;
  }
}

const batchers = new WeakMap<Model, Map<Rate, Batcher>>();

class SileroStream implements VadStream {
  /** Silero v5's recurrent state for this stream: 2 x 128. */
  private readonly state = new Float32Array(2 * 128);
  /** Context then the samples not yet in a window: the first `context` are the previous window's tail. */
  private pending: Float32Array;
  private readonly window: number;
  private readonly context: number;
  private clockMs = 0;
  private speaking = false;
  private speechMs = 0;
  private silenceMs = 0;
  private speechStartedAt = 0;
  private closed = false;

  private readonly batcher: Batcher;

  constructor(model: Model, rate: Rate, private options: VadOptions) {
    let byRate = batchers.get(model);
    if (!byRate) batchers.set(model, (byRate = new Map()));
    let batcher = byRate.get(rate);
    if (!batcher) byRate.set(rate, (batcher = new Batcher(model, rate)));
    this.batcher = batcher;
    this.window = SHAPES[rate].window;
    this.context = SHAPES[rate].context;
    this.pending = new Float32Array(this.context);
  }

  update(options: Partial<VadOptions>): void {
    this.options = { ...this.options, ...options };
  }

  async push(pcm: Int16Array): Promise<VadEvent[]> {
    const joined = new Float32Array(this.pending.length + pcm.length);
    joined.set(this.pending);
    for (let i = 0; i < pcm.length; i++) joined[this.pending.length + i] = pcm[i]! / 32768;
    const events: VadEvent[] = [];
    const { window: size, context } = this;
    let offset = 0;
    for (; offset + context + size <= joined.length && !this.closed; offset += size) {
      const probability = await this.infer(joined.subarray(offset, offset + context + size), context);
      this.clockMs += WINDOW_MS;
      this.step(probability, events);
    }
    this.pending = joined.slice(offset);
    return events;
  }

  /** `input`: `context` samples, then the window. */
  private async infer(input: Float32Array, context: number): Promise<number> {
    let sum = 0;
    for (let i = context; i < input.length; i++) sum += input[i]! * input[i]!;
    if (Math.sqrt(sum / (input.length - context)) * 32768 < SILENCE_RMS) return 0;
    return this.batcher.infer(input, this.state);
  }

  private step(p: number, events: VadEvent[]): void {
    const o = this.options;
    if (!this.speaking) {
      if (p >= o.startThreshold) {
        if (this.speechMs === 0) this.speechStartedAt = this.clockMs - WINDOW_MS;
        this.speechMs += WINDOW_MS;
        if (this.speechMs >= o.minSpeechMs) {
          this.speaking = true;
          this.silenceMs = 0;
          events.push({ type: 'speech_start', atMs: this.speechStartedAt });
        }
      } else if (p < o.stopThreshold) this.speechMs = 0;
    } else if (p < o.stopThreshold) {
      this.silenceMs += WINDOW_MS;
      if (this.silenceMs >= o.minSilenceMs) {
        this.speaking = false;
        this.speechMs = 0;
        const endedAt = this.clockMs - this.silenceMs;
        events.push({ type: 'speech_end', atMs: endedAt, durationMs: endedAt - this.speechStartedAt });
      }
    } else this.silenceMs = 0;
  }

  close(): void {
    this.closed = true;
  }
}

export interface SileroOptions extends Partial<VadOptions> {
  /** Which ONNX Runtime build runs the model; default auto: native when it loads, else wasm. */
  runtime?: SileroRuntime | 'auto';
}

export class SileroVAD implements VAD {
  readonly label = 'silero';
  readonly sampleRatesHz = RATES;
  private readonly runtime: SileroRuntime | 'auto';
  private readonly defaults: Partial<VadOptions>;

  constructor(options: SileroOptions = {}) {
    const { runtime, ...defaults } = options;
    this.runtime = runtime ?? 'auto';
    this.defaults = defaults;
  }

  /** The build that runs the model (loads it). */
  async runtimeInUse(): Promise<SileroRuntime> {
    return (await loadModel(this.runtime)).runtime;
  }

  async open(options: Partial<VadOptions> = {}, sampleRateHz: number = RATES[0]!): Promise<VadStream> {
    if (!(sampleRateHz in SHAPES)) throw new RangeError(`Silero VAD takes ${RATES.join(' or ')} Hz audio, not ${sampleRateHz}`);
    return new SileroStream(await loadModel(this.runtime), sampleRateHz as Rate, { ...VAD_DEFAULTS, ...this.defaults, ...options });
  }
}

/** Silero's cost is worth knowing at start: loads the model once (about 2 MB). */
export function preloadSilero(runtime: SileroRuntime | 'auto' = 'auto'): Promise<unknown> {
  return loadModel(runtime);
}

