/**
 * One media stream of an emulated call: the emulator is the WebSocket client, as Twilio, Plivo and
 * Exotel are, and speaks their frame formats. Callee audio goes out in real time (silence when the
 * callee is quiet: real providers stream continuously); Dialer's audio is queued and "played" on a
 * playout clock, so marks/checkpoints are echoed when the audio before them has been heard and a
 * clear drops what is still queued.
 */
import WebSocket from 'ws';
import { bytesToPcm, decodeMulaw, encodeMulaw, pcmToBytes, resample } from '../lib/audio.js';
import { clock, type CallAudio } from './audio.js';
import { Callee, FRAME, SILENT_FRAME } from './callee.js';
import type { EmulatedCall, EmulatedProvider } from './types.js';
import { twilioId, uuid } from './util.js';

const FRAME_MS = 20;

export interface LegOptions {
  provider: EmulatedProvider;
  url: string;
  call: EmulatedCall;
  audio: CallAudio;
  accountId: string;
  customParameters: Record<string, string>;
  /** Plivo <Stream contentType>: audio/x-l16;rate=8000 (Plivo's default), audio/x-l16;rate=16000, audio/x-mulaw;rate=8000. */
  contentType?: string;
  /** Who speaks and listens at the far end (one for the whole call, across its streams). */
  callee: Callee;
  /** Keep the media frames and audio in the call's record (EmulatorOptions.recordMedia). */
  record: boolean;
  log: (m: string) => void;
  headers?: Record<string, string>;
}

type Queued = { pcm: Int16Array; at: number } | { mark: string };

export class MediaLeg {
  readonly streamSid: string;
  startedAt = 0;
  /** Settles when the socket is closed (by either side); `byDialer` when Dialer closed it. */
  readonly closed: Promise<{ code: number; byDialer: boolean }>;
  private ws: WebSocket | undefined;
  private resolveClosed!: (v: { code: number; byDialer: boolean }) => void;
  private stopping = false;
  private seq = 0;
  private chunk = 0;
  private framesSent = 0;
  /** On the shared clock (the stream is live). */
  private ticking = false;
  /** The payload of a silent frame on this stream (see sendFrame). */
  private silentPayload: string | undefined;
  private playQueue: Queued[] = [];
  private exotelPending: Int16Array[] = [];
  private readonly rate: number;
  private readonly mulaw: boolean;

  constructor(private readonly o: LegOptions) {
    this.streamSid = o.provider === 'PROVIDER_A' ? twilioId('MZ') : o.provider === 'PROVIDER_C' ? uuid() : twilioId('').slice(0, 32);
    this.closed = new Promise((r) => (this.resolveClosed = r));
    const ct = (o.contentType ?? 'audio/x-l16;rate=8000').toLowerCase();
    if (o.provider === 'PROVIDER_A') (this.mulaw = true), (this.rate = 8000);
    else if (o.provider === 'PROVIDER_C') (this.mulaw = ct.includes('mulaw')), (this.rate = /rate=16000/.test(ct) ? 16000 : 8000);
    else {
      const q = Number(new URL(o.url).searchParams.get('sample-rate'));
      (this.mulaw = false), (this.rate = [16000, 24000].includes(q) ? q : 8000);
    }
  }

  /** Connects, sends the opening frames and starts the clock. Rejects when the socket cannot be opened. */
  async open(): Promise<void> {
    const ws = new WebSocket(this.o.url, { headers: this.o.headers });
    this.ws = ws;
    ws.on('close', (code) => {
      this.halt();
      this.o.call.wsCloseCode = code;
      this.resolveClosed({ code, byDialer: !this.stopping });
    });
    await new Promise<void>((resolve, reject) => {
      ws.once('open', resolve);
      ws.once('error', reject);
    });
    ws.on('error', (err) => this.o.log(`media socket error: ${err.message}`));
    ws.on('message', (data, isBinary) => this.onFrame(isBinary ? data : data.toString()));
    this.startedAt = Date.now();
    this.o.call.streamStartedAt = this.startedAt;
    for (const f of this.opening()) this.send(f);
    this.ticking = true;
    clock.add(this);
  }

  /** The provider ends the stream (callee hung up, call ended or new instructions): stop frame, then close. */
  async stop(): Promise<void> {
    if (this.stopping || !this.ws) return;
    this.stopping = true;
    this.halt();
    const c = this.o.call;
    if (this.ws.readyState === WebSocket.OPEN) {
      if (this.o.provider === 'PROVIDER_A') this.send({ event: 'stop', sequenceNumber: this.nextSeq(), streamSid: this.streamSid, stop: { accountSid: this.o.accountId, callSid: c.callSid } });
      if (this.o.provider === 'PROVIDER_B') this.send({ event: 'stop', sequence_number: this.nextSeq(), stream_sid: this.streamSid, stop: { call_sid: c.callSid, account_sid: this.o.accountId, reason: 'callended' } });
      // Plivo sends no stop message: its socket just closes when the call ends.
      this.ws.close(1000);
    } else if (this.ws.readyState === WebSocket.CONNECTING) this.ws.terminate();
    const timeout = setTimeout(() => this.ws?.terminate(), 2000);
    await this.closed;
    clearTimeout(timeout);
  }

  private halt(): void {
    this.ticking = false;
    clock.remove(this);
  }

  /** Whether the stream is live (its clock runs). */
  get live(): boolean {
    return this.ticking;
  }

  /** Whether Dialer's audio is still queued for playout. */
  audioQueued(): boolean {
    return this.playQueue.some((q) => 'pcm' in q);
  }

  private nextSeq(): string | number {
    this.seq += 1;
    return this.o.provider === 'PROVIDER_C' ? this.seq : String(this.seq);
  }

  private send(frame: unknown): void {
    if (this.ws?.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify(frame));
  }

  private opening(): unknown[] {
    const c = this.o.call;
    if (this.o.provider === 'PROVIDER_A') {
      return [
        { event: 'connected', protocol: 'Call', version: '1.0.0' },
        {
          event: 'start',
          sequenceNumber: this.nextSeq(),
          start: { accountSid: this.o.accountId, streamSid: this.streamSid, callSid: c.callSid, tracks: ['inbound'], customParameters: this.o.customParameters, mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 } },
          streamSid: this.streamSid,
        },
      ];
    }
    if (this.o.provider === 'PROVIDER_C') {
      const extra = Object.entries(this.o.customParameters).map(([k, v]) => `${k}=${v}`).join(';');
      return [
        {
          event: 'start',
          sequenceNumber: this.nextSeq(),
          start: { callId: c.callSid, streamId: this.streamSid, accountId: this.o.accountId, tracks: ['inbound'], mediaFormat: { encoding: this.mulaw ? 'audio/x-mulaw' : 'audio/x-l16', sampleRate: this.rate } },
          extra_headers: extra,
        },
      ];
    }
    return [
      { event: 'connected' },
      {
        event: 'start',
        sequence_number: this.nextSeq(),
        stream_sid: this.streamSid,
        start: {
          stream_sid: this.streamSid,
          call_sid: c.callSid,
          account_sid: this.o.accountId,
          from: c.from,
          to: c.to,
          custom_parameters: this.o.customParameters,
          media_format: { encoding: 'raw/slin', sample_rate: String(this.rate), bit_rate: `${(this.rate * 16) / 1000}kbps` },
        },
      },
    ];
  }

  /** Ms since this stream started. */
  msSinceStart(): number {
    return Date.now() - this.startedAt;
  }

  /** Runs on the shared 10 ms clock; catches up to real time in 20 ms frames. */
  tick(): void {
    const due = Math.floor(this.msSinceStart() / FRAME_MS);
    const sent = this.o.call.sent;
    while (this.framesSent < due && this.ticking) {
      this.framesSent += 1;
      sent.frames += 1;
      if (this.msSinceStart() - this.framesSent * FRAME_MS > FRAME_MS) sent.framesLate += 1;
      this.sendFrame(this.nextCalleeFrame());
      this.playFrame();
    }
  }

  private nextCalleeFrame(): Int16Array {
    // This frame's time on the line (the one being sent now).
    const out = this.o.callee.nextFrame(this.framesSent * FRAME_MS - FRAME_MS);
    if (this.o.record) this.o.audio.sent.push(out);
    return out;
  }

  private sendFrame(pcm8k: Int16Array): void {
    const p = this.o.provider;
    const ts = String(this.framesSent * FRAME_MS);
    if (p === 'PROVIDER_B') {
      // Exotel sends ~100 ms chunks of 16-bit little-endian PCM.
      this.exotelPending.push(pcm8k);
      if (this.exotelPending.length < 5) return;
      const joined = new Int16Array(FRAME * 5);
      this.exotelPending.forEach((f, i) => joined.set(f, i * FRAME));
      this.exotelPending = [];
      const payload = pcmToBytes(resample(joined, 8000, this.rate)).toString('base64');
      this.chunk += 1;
      this.send({ event: 'media', sequence_number: this.nextSeq(), stream_sid: this.streamSid, media: { chunk: String(this.chunk), timestamp: ts, payload } });
      return;
    }
    this.chunk += 1;
    // A quiet callee (most of a call) sends the same frame every time: encoded once per stream.
    const payload = pcm8k === SILENT_FRAME ? (this.silentPayload ??= this.encode(pcm8k)) : this.encode(pcm8k);
    if (p === 'PROVIDER_A') {
      // Twilio's timestamp is the frame's time since the stream started. Stamped with when the frame
      // actually leaves (not its ideal slot), so a late tick of this emulator is not taken for
      // Dialer's lateness by a receiver that times frames against it.
      this.send({ event: 'media', sequenceNumber: this.nextSeq(), media: { track: 'inbound', chunk: String(this.chunk), timestamp: String(this.msSinceStart()), payload }, streamSid: this.streamSid });
    } else {
      this.send({ event: 'media', sequenceNumber: this.nextSeq(), streamId: this.streamSid, media: { track: 'inbound', timestamp: String(Date.now()), chunk: this.chunk, payload }, extra_headers: '' });
    }
  }

  /** A frame of the callee's 8 kHz audio as this stream's media payload (base64 at the stream's rate and encoding). */
  private encode(pcm8k: Int16Array): string {
    const pcm = resample(pcm8k, 8000, this.rate);
    return (this.mulaw ? encodeMulaw(pcm) : pcmToBytes(pcm)).toString('base64');
  }

  /** Plays 20 ms of Dialer's queued audio and echoes the marks it reaches. */
  private playFrame(): void {
    let need = FRAME;
    const played: Int16Array[] = [];
    for (;;) {
      const head = this.playQueue[0];
      if (!head) break;
      if ('mark' in head) {
        this.playQueue.shift();
        this.echoMark(head.mark);
        continue;
      }
      if (need === 0) break;
      const take = Math.min(need, head.pcm.length - head.at);
      played.push(head.pcm.subarray(head.at, head.at + take));
      head.at += take;
      need -= take;
      if (head.at >= head.pcm.length) this.playQueue.shift();
    }
    for (const p of played) {
      // A copy only to keep: the callee hears the frame now.
      const pcm = this.o.record ? p.slice() : p;
      if (this.o.record) this.o.audio.received.push(pcm);
      this.o.callee.heard(pcm, Callee.voiced(pcm));
    }
    // This frame plays from now for 20 ms.
    this.o.callee.heardFrame(played, this.framesSent * FRAME_MS);
  }

  private echoMark(name: string): void {
    this.o.call.received.marks.push({ name, atMs: this.msSinceStart() });
    if (this.o.provider === 'PROVIDER_A') this.send({ event: 'mark', sequenceNumber: this.nextSeq(), streamSid: this.streamSid, mark: { name } });
    else if (this.o.provider === 'PROVIDER_C') this.send({ event: 'playedStream', sequenceNumber: this.nextSeq(), streamId: this.streamSid, name });
    else this.send({ event: 'mark', sequence_number: this.nextSeq(), stream_sid: this.streamSid, mark: { name } });
  }

  private enqueueAudio(pcm: Int16Array): void {
    this.o.call.received.audioFrames += 1;
    if (this.o.record) this.o.call.received.audioAtMs.push(this.msSinceStart());
    if (pcm.length > 0) this.playQueue.push({ pcm, at: 0 });
  }

  private enqueueMark(name: string): void {
    this.playQueue.push({ mark: name });
    if (this.playQueue.length === 1) this.playFrameMarksOnly();
  }

  /** Marks at the head of an otherwise empty queue are reached at once. */
  private playFrameMarksOnly(): void {
    while (this.playQueue[0] && 'mark' in this.playQueue[0]) this.echoMark((this.playQueue.shift() as { mark: string }).mark);
  }

  private clearQueue(): void {
    this.o.call.received.clears.push(this.msSinceStart());
    const pending = this.playQueue.filter((q): q is { mark: string } => 'mark' in q).map((q) => q.mark);
    this.playQueue = [];
    if (this.o.provider === 'PROVIDER_C') this.send({ event: 'clearedAudio', sequenceNumber: this.nextSeq(), streamId: this.streamSid });
    for (const name of pending) this.echoMark(name);
  }

  private onFrame(data: unknown): void {
    const raw = typeof data === 'string' ? data : Buffer.isBuffer(data) ? data.toString() : String(data);
    let f: Record<string, any>;
    try {
      f = JSON.parse(raw) as Record<string, any>;
    } catch {
      this.o.call.received.frames.push(raw);
      this.o.log(`${this.o.provider} stream: a frame that is not JSON: ${raw.slice(0, 80)}`);
      return;
    }
    const p = this.o.provider;
    const event = f?.event;
    if (this.o.record || (event !== 'media' && event !== 'playAudio')) this.o.call.received.frames.push(f);
    try {
      if (p === 'PROVIDER_A' || p === 'PROVIDER_B') {
        const sid = p === 'PROVIDER_A' ? f.streamSid : f.stream_sid;
        if (sid !== undefined && sid !== this.streamSid) this.o.log(`${p} stream: frame for another stream ${String(sid)}`);
        if (event === 'media') {
          const bytes = Buffer.from(String(f.media?.payload ?? ''), 'base64');
          this.enqueueAudio(p === 'PROVIDER_A' ? decodeMulaw(bytes) : resample(bytesToPcm(bytes), this.rate, 8000));
        } else if (event === 'mark') this.enqueueMark(String(f.mark?.name ?? ''));
        else if (event === 'clear') this.clearQueue();
        else this.o.log(`${p} stream: unknown event ${String(event)}`);
      } else {
        if (event === 'playAudio') {
          const ct = String(f.media?.contentType ?? '');
          const rate = Number(f.media?.sampleRate ?? 8000);
          const bytes = Buffer.from(String(f.media?.payload ?? ''), 'base64');
          const pcm = ct.includes('mulaw') ? decodeMulaw(bytes) : bytesToPcm(bytes);
          this.enqueueAudio(resample(pcm, rate === 16000 ? 16000 : 8000, 8000));
        } else if (event === 'checkpoint') this.enqueueMark(String(f.name ?? ''));
        else if (event === 'clearAudio') this.clearQueue();
        else this.o.log(`Plivo stream: unknown event ${String(event)}`);
      }
    } catch (err) {
      this.o.log(`${p} stream: bad frame: ${(err as Error).message}`);
    }
  }

  /** One key press of the callee, as the provider reports it on the stream. */
  sendDtmf(digit: string): void {
    const p = this.o.provider;
    if (p === 'PROVIDER_A') this.send({ event: 'dtmf', streamSid: this.streamSid, sequenceNumber: this.nextSeq(), dtmf: { track: 'inbound_track', digit } });
    else if (p === 'PROVIDER_C') this.send({ event: 'dtmf', sequenceNumber: this.nextSeq(), streamId: this.streamSid, dtmf: { track: 'inbound', digit, timestamp: String(Date.now()) } });
    else this.send({ event: 'dtmf', sequence_number: this.nextSeq(), stream_sid: this.streamSid, dtmf: { digit, duration: '100' } });
  }
}
