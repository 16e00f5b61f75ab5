/**
 * The RTP stream of one SIP call (RFC 3550): G.711 at 20 ms frames both ways, RFC 4733
 * telephone-events both ways, and a small jitter buffer on what arrives.
 *
 * Dialer sends continuously (silence when the agent is quiet), as phones do: one frame per 20 ms,
 * paced by one process-wide clock (`pacer`) so a hundred calls cost one timer, not a hundred.
 *
 * Terminology
 * - frame: 20 ms of audio, 160 samples at 8 kHz, one RTP packet.
 * - event: a key press sent as RFC 4733 packets (same timestamp, growing duration, three end packets).
 */
import { createSocket, type Socket } from 'node:dgram';
import { randomInt } from 'node:crypto';
import { decodeAlaw, encodeAlaw } from '../../lib/alaw.js';
import { decodeMulaw, encodeMulaw } from '../../lib/audio.js';
import { takeFrame } from '../../lib/pcm-buffers.js';
import type { PlayResult } from '../../voice/index.js';
import type { RemoteMedia } from './sdp.js';

export const FRAME_SAMPLES = 160;
export const FRAME_MS = 20;
const EVENT_CODES: Readonly<Record<string, number>> = { '0': 0, '1': 1, '2': 2, '3': 3, '4': 4, '5': 5, '6': 6, '7': 7, '8': 8, '9': 9, '*': 10, '#': 11, A: 12, B: 13, C: 14, D: 15 };
const EVENT_DIGITS = Object.fromEntries(Object.entries(EVENT_CODES).map(([k, v]) => [v, k])) as Record<number, string>;
/** A key is held 100 ms (5 frames) and followed by 60 ms of quiet. */
const KEY_FRAMES = 5;
const KEY_GAP_FRAMES = 3;

/**
 * Puts arriving frames back in order. Frames wait until the one before them came; when more than
 * `depth` wait, the missing one is taken as lost and its place is filled (the last frame, halved).
 * A frame whose place was already filled (or that came twice) is dropped. A jump of more than
 * `RESYNC_FRAMES` either way is a stream that started again (a new source after a re-INVITE, a
 * carrier's media switch): the buffer follows it at once, rather than filling the gap with seconds
 * of concealment or dropping every frame as late.
 */
export class JitterBuffer {
  static readonly RESYNC_FRAMES = 100;
  private expected: number | undefined;
  private readonly waiting = new Map<number, Int16Array>();
  private last: Int16Array = new Int16Array(FRAME_SAMPLES);
  /** Frames concealed, frames that came too late or twice, and restarts followed. */
  lost = 0;
  late = 0;
  resyncs = 0;

  constructor(private readonly depth = 3) {}

  push(seq: number, pcm: Int16Array): Int16Array[] {
    this.expected ??= seq;
    const ahead = (seq - this.expected) & 0xffff;
    const out: Int16Array[] = [];
    if (ahead > JitterBuffer.RESYNC_FRAMES && ahead < 0x10000 - JitterBuffer.RESYNC_FRAMES) {
      // What waits is handed on in its order, and the stream goes on from here.
      for (const s of [...this.waiting.keys()].sort((a, b) => ((a - this.expected!) & 0xffff) - ((b - this.expected!) & 0xffff))) out.push(this.waiting.get(s)!);
      this.waiting.clear();
      this.expected = seq;
      this.resyncs++;
    } else if (ahead >= 0x8000 || this.waiting.has(seq)) {
      this.late++;
      return [];
    }
    this.waiting.set(seq, pcm);
    for (;;) {
      const next = this.waiting.get(this.expected);
      if (next) {
        this.waiting.delete(this.expected);
        out.push(next);
        this.last = next;
      } else if (this.waiting.size > this.depth) {
        this.lost++;
        out.push(this.last.map((s) => s >> 1));
      } else break;
      this.expected = (this.expected + 1) & 0xffff;
    }
    return out;
  }
}

interface Queued {
  pcm: Int16Array;
  offset: number;
  resolve: (r: PlayResult) => void;
}

type KeyStep = { kind: 'event'; code: number; timestamp: number; duration: number; end: boolean; first: boolean } | { kind: 'quiet' } | { kind: 'done'; resolve: () => void; reject: (err: Error) => void };

/** The process-wide 20 ms clock: every live stream sends the frames it owes on each tick. */
class Pacer {
  private readonly streams = new Set<RtpStream>();
  private timer: NodeJS.Timeout | undefined;
  private readonly epoch = performance.now();
  /** Frames sent more than one frame late, and all frames sent (for the benchmark's figure). */
  lateFrames = 0;
  frames = 0;

  add(stream: RtpStream): void {
    this.streams.add(stream);
    if (!this.timer) this.schedule();
  }

  delete(stream: RtpStream): void {
    this.streams.delete(stream);
    if (this.streams.size === 0 && this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
  }

  /**
   * The clock's next tick: a stream's frames fall due on the ticks themselves, so a frame goes out
   * late only when a tick does (by a frame or more), not by the chance of where its call began
   * between two ticks.
   */
  nextTick(): number {
    const now = performance.now();
    return this.epoch + Math.ceil((now - this.epoch) / FRAME_MS) * FRAME_MS;
  }

  private schedule(): void {
    const now = performance.now();
    const next = FRAME_MS - ((now - this.epoch) % FRAME_MS);
    this.timer = setTimeout(() => {
      const at = performance.now();
      for (const stream of this.streams) stream.catchUp(at);
      this.schedule();
    }, next);
  }
}

export const pacer = new Pacer();

export interface RtpStreamOptions {
  socket: Socket;
  remote: RemoteMedia;
  /** Each frame heard, in order (lost ones concealed). */
  onAudio(pcm: Int16Array): void;
  /** A key the far side pressed (once per press). */
  onDigit(digit: string): void;
}

export class RtpStream {
  private readonly ssrc = randomInt(0, 2 ** 32);
  private seq = randomInt(0, 0x10000);
  private readonly timestampBase = randomInt(0, 2 ** 32);
  private framesSent = 0;
  private readonly startedAt = pacer.nextTick();
  private readonly queue: Queued[] = [];
  private readonly keySteps: KeyStep[] = [];
  private readonly jitter = new JitterBuffer();
  private lastEventTimestamp: number | undefined;
  private closed = false;
  private readonly encode: (pcm: Int16Array) => Buffer;
  private readonly decode: (bytes: Uint8Array) => Int16Array;
  private readonly silence: Buffer;

  constructor(private readonly options: RtpStreamOptions) {
    const alaw = options.remote.codec === 'PCMA';
    this.encode = alaw ? encodeAlaw : encodeMulaw;
    this.decode = alaw ? decodeAlaw : decodeMulaw;
    this.silence = this.encode(new Int16Array(FRAME_SAMPLES));
    options.socket.on('message', (data) => this.receive(data));
    pacer.add(this);
  }

  get stats(): { lost: number; late: number; sent: number; restarts: number } {
    return { lost: this.jitter.lost, late: this.jitter.late, sent: this.framesSent, restarts: this.jitter.resyncs };
  }

  /** Queues audio; resolves once its last frame was sent, or when it was cleared or the call ended. */
  play(pcm: Int16Array): Promise<PlayResult> {
    if (this.closed) return Promise.resolve('ended');
    return new Promise((resolve) => this.queue.push({ pcm, offset: 0, resolve }));
  }

  clear(): void {
    for (const q of this.queue.splice(0)) q.resolve('cleared');
  }

  /** Presses keys (0-9, *, #, A-D; w waits half a second); resolves once the last was sent. */
  sendDigits(digits: string): Promise<void> {
    if (this.closed) return Promise.reject(new Error('the call is over'));
    if (this.options.remote.eventPayloadType === undefined) return Promise.reject(new Error('the far side accepts no telephone-events'));
    return new Promise((resolve, reject) => {
      for (const ch of digits) {
        if (ch === 'w') {
          for (let i = 0; i < 25; i++) this.keySteps.push({ kind: 'quiet' });
          continue;
        }
        const code = EVENT_CODES[ch.toUpperCase()]!;
        // The event's timestamp is fixed when its first packet goes out (see step()).
        for (let i = 1; i <= KEY_FRAMES; i++) this.keySteps.push({ kind: 'event', code, timestamp: -1, duration: i * FRAME_SAMPLES, end: false, first: i === 1 });
        for (let i = 0; i < 3; i++) this.keySteps.push({ kind: 'event', code, timestamp: -1, duration: KEY_FRAMES * FRAME_SAMPLES, end: true, first: false });
        for (let i = 0; i < KEY_GAP_FRAMES; i++) this.keySteps.push({ kind: 'quiet' });
      }
      this.keySteps.push({ kind: 'done', resolve, reject });
    });
  }

  /** Sends the frames owed by `now` (at most five at once: after a stall, the rest are skipped). */
  catchUp(now: number): void {
    // (A tick's timer may read the clock a hair before the tick itself: 1 ms of grace.)
    const owed = Math.floor((now - this.startedAt + 1) / FRAME_MS) + 1 - this.framesSent;
    if (owed > 1) pacer.lateFrames++;
    if (owed > 5) this.framesSent += owed - 5;
    for (let i = 0; i < Math.min(owed, 5); i++) this.step();
  }

  private eventTimestamp = 0;

  private step(): void {
    const timestamp = (this.timestampBase + this.framesSent * FRAME_SAMPLES) >>> 0;
    this.framesSent++;
    pacer.frames++;
    let key = this.keySteps[0];
    while (key?.kind === 'done') {
      this.keySteps.shift();
      key.resolve();
      key = this.keySteps[0];
    }
    if (key) {
      this.keySteps.shift();
      if (key.kind === 'event') {
        if (key.first) this.eventTimestamp = timestamp;
        const payload = Buffer.from([key.code, (key.end ? 0x80 : 0) | 10, key.duration >> 8, key.duration & 0xff]);
        this.send(this.options.remote.eventPayloadType!, key.first, this.eventTimestamp, payload);
        return;
      }
      this.send(this.options.remote.payloadType, false, timestamp, this.silence);
      return;
    }
    const head = this.queue[0];
    if (!head) {
      this.send(this.options.remote.payloadType, false, timestamp, this.silence);
      return;
    }
    const frame = takeFrame(this.queue, FRAME_SAMPLES, (q) => q.resolve('played'));
    this.send(this.options.remote.payloadType, false, timestamp, this.encode(frame));
  }

  private send(payloadType: number, marker: boolean, timestamp: number, payload: Buffer): void {
    if (this.closed) return;
    const packet = Buffer.allocUnsafe(12 + payload.length);
    packet[0] = 0x80;
    packet[1] = (marker ? 0x80 : 0) | payloadType;
    packet.writeUInt16BE(this.seq, 2);
    packet.writeUInt32BE(timestamp, 4);
    packet.writeUInt32BE(this.ssrc, 8);
    payload.copy(packet, 12);
    this.seq = (this.seq + 1) & 0xffff;
    this.options.socket.send(packet, this.options.remote.port, this.options.remote.address);
  }

  private receive(data: Buffer): void {
    if (this.closed || data.length < 12 || data[0]! >> 6 !== 2) return;
    const csrc = data[0]! & 0x0f;
    let offset = 12 + csrc * 4;
    if (data[0]! & 0x10) offset += 4 + data.readUInt16BE(offset + 2) * 4;
    let end = data.length;
    if (data[0]! & 0x20) end -= data[end - 1]!;
    if (offset > end) return;
    const payloadType = data[1]! & 0x7f;
    const seq = data.readUInt16BE(2);
    const payload = data.subarray(offset, end);
    if (payloadType === this.options.remote.eventPayloadType) {
      if (payload.length < 4) return;
      const timestamp = data.readUInt32BE(4);
      // One press is many packets with one timestamp: the first one that arrives reports it.
      if (timestamp === this.lastEventTimestamp) return;
      this.lastEventTimestamp = timestamp;
      const digit = EVENT_DIGITS[payload[0]!];
      if (digit !== undefined) this.options.onDigit(digit);
      return;
    }
    if (payloadType !== this.options.remote.payloadType) return;
    for (const frame of this.jitter.push(seq, this.decode(payload))) this.options.onAudio(frame);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    pacer.delete(this);
    for (const q of this.queue.splice(0)) q.resolve('ended');
    for (const step of this.keySteps.splice(0)) if (step.kind === 'done') step.reject(new Error('the call ended before the keys were sent'));
  }
}

/** A UDP socket for one call's RTP, on any free port of `host`. */
export async function bindRtp(host: string): Promise<Socket> {
  const socket = createSocket('udp4');
  await new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    socket.bind(0, host, () => {
      socket.off('error', reject);
      resolve();
    });
  });
  return socket;
}
