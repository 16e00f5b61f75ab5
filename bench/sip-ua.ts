/**
 * Dialer's side of bench:sip, in a process of its own (pinned by the bench to Dialer's CPU).
 *
 * - `dialer` (the default): Dialer's SIP driver as `dialer serve` builds it: its SIP endpoint and
 *   user agent, one RTP socket per call, the RTP stream (G.711 both ways on the process-wide 20 ms
 *   clock, the jitter buffer), the call recorder and the WAV written to disk at the end. The agent
 *   speaks all along (a speech clip in a loop) and listens; it hangs up nothing: the far side's BYE
 *   ends each call.
 * - `floor`: the least a SIP and RTP endpoint can do for the same calls, as the baseline: an INVITE
 *   prebuilt as text, the answer's RTP port read with a regular expression, the ACK, and prebuilt
 *   G.711 frames sent on one clock; nothing decoded, nothing recorded.
 *
 * Both measure the same things: each call's setup time (INVITE sent to the answer handled and the
 * media going), the frames sent more than a frame late (the sending clock's), and the frames heard
 * late: a frame handed on more than one frame plus 20 ms after its time (the first frame's arrival
 * plus 20 ms a frame: Dialer's jitter buffer hands on a lost frame's concealment in its place; the
 * floor goes by the packets' sequence numbers).
 *
 * Messages with the bench (process IPC): UaRequest in, UaReply out.
 */
import { createSocket, type Socket } from 'node:dgram';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { encodeMulaw } from '../src/lib/audio.js';
import { createLogger } from '../src/lib/logger.js';
import { synthesize } from '../src/lib/speech.js';
import { SipDriver } from '../src/telephony/sip/driver.js';
import { pacer } from '../src/telephony/sip/rtp.js';
import type { CallAgent } from '../src/voice/index.js';

export type UaRequest = { type: 'round'; calls: number; trunk: string; spreadMs: number } | { type: 'close' };

export interface UaCall {
  callId: string;
  completed: boolean;
  endedByFarSide: boolean;
  setupMs: number;
  framesHeard: number;
  framesHeardLate: number;
  /** The call's end, when it is not the far side's BYE (an error, a failure). */
  problem?: string;
}

export type UaReply = { type: 'ready' } | { type: 'done'; calls: UaCall[]; framesSent: number; framesSentLate: number; loopP99Ms: number; loopMaxMs: number };

const FRAME_MS = 20;
const mode = process.argv[2] === 'floor' ? 'floor' : 'dialer';
const loop = monitorEventLoopDelay({ resolution: 10 });
loop.enable();

const agentSpeech = await synthesize('Hello! This is an automated call from Dialer about your order. Can you confirm it please? Thank you for your time.', { sampleRateHz: 8000 });

/** Frames heard on one call: late when handed on more than a frame plus 20 ms after their time. */
class Arrivals {
  private first: number | undefined;
  private firstSeq = 0;
  heard = 0;
  late = 0;
  /** A frame handed on now: the n-th since the first, or the one of RTP sequence number `seq` (the floor's raw packets). */
  frame(seq?: number): void {
    const now = performance.now();
    if (this.first === undefined) {
      this.first = now;
      this.firstSeq = seq ?? 0;
    }
    const index = seq === undefined ? this.heard : (seq - this.firstSeq) & 0xffff;
    if (now - (this.first + index * FRAME_MS) > 2 * FRAME_MS) this.late++;
    this.heard++;
  }
}

// ---- Dialer's driver ----

const recordingsDir = fs.mkdtempSync(path.join(os.tmpdir(), 'dialer-bench-sip-'));
process.on('exit', () => fs.rmSync(recordingsDir, { recursive: true, force: true }));
const arrivals = new Map<string, Arrivals>();

const benchAgent: CallAgent = {
  label: 'bench',
  async converse(context, io) {
    const heard = new Arrivals();
    arrivals.set(context.callId!, heard);
    io.onAudio(() => heard.frame());
    while (!io.signal.aborted) if ((await io.play(agentSpeech)) !== 'played') break;
    return { metaData: {} };
  },
};

/** Call i of n is placed i/n of the way through the spread (a trunk's calls per second, not one burst). */
const placeAt = (i: number, calls: number, spreadMs: number) => new Promise((resolve) => setTimeout(resolve, (i * spreadMs) / calls));

async function dialerRound(driver: SipDriver, calls: number, spreadMs: number): Promise<UaCall[]> {
  arrivals.clear();
  return Promise.all(
    Array.from({ length: calls }, async (_, i) => {
      await placeAt(i, calls, spreadMs);
      const result = await driver.dial({
        leadId: `lead-${i}`,
        attempt: 1,
        to: `+1415${String(5_000_000 + i)}`,
        from: '+12125550100',
        templateId: 'bench',
        payload: {},
        executionMode: 'sip',
        onCallId: () => undefined,
        signal: new AbortController().signal,
      });
      const meta = result.end.metaData ?? {};
      const heard = arrivals.get(result.callId ?? '');
      const completed = result.end.kind === 'completed';
      return {
        callId: result.callId ?? '',
        completed,
        endedByFarSide: meta.sip_ended_by === 'customer',
        setupMs: Number(meta.sip_setup_ms ?? NaN),
        framesHeard: heard?.heard ?? 0,
        framesHeardLate: heard?.late ?? 0,
        ...(completed ? {} : { problem: `${result.end.kind}: ${'error' in result.end ? result.end.error : ''}` }),
      };
    }),
  );
}

// ---- The floor ----

let floorLate = 0;
let floorSent = 0;

async function floorCall(sip: Socket, answers: Map<string, (text: string) => void>, byes: Map<string, () => void>, trunk: { host: string; port: number }, i: number): Promise<UaCall> {
  const media = createSocket('udp4');
  await new Promise<void>((resolve) => media.bind(0, '127.0.0.1', resolve));
  const heard = new Arrivals();
  media.on('message', (data) => heard.frame(data.readUInt16BE(2)));
  const callId = `floor-${randomBytes(8).toString('hex')}`;
  const local = sip.address();
  const sdp = ['v=0', 'o=floor 1 1 IN IP4 127.0.0.1', 's=floor', 'c=IN IP4 127.0.0.1', 't=0 0', `m=audio ${media.address().port} RTP/AVP 0 101`, 'a=rtpmap:0 PCMU/8000', 'a=rtpmap:101 telephone-event/8000', 'a=ptime:20', 'a=sendrecv', ''].join('\r\n');
  const to = `<sip:+1415${5_000_000 + i}@${trunk.host}>`;
  const invite = [
    `INVITE sip:+1415${5_000_000 + i}@${trunk.host} SIP/2.0`,
    `Via: SIP/2.0/UDP 127.0.0.1:${local.port};branch=z9hG4bK${callId};rport`,
    'Max-Forwards: 70',
    `From: <sip:+12125550100@${trunk.host}>;tag=f${i}`,
    `To: ${to}`,
    `Call-ID: ${callId}`,
    'CSeq: 1 INVITE',
    `Contact: <sip:+12125550100@127.0.0.1:${local.port}>`,
    'Content-Type: application/sdp',
    `Content-Length: ${sdp.length}`,
    '',
    sdp,
  ].join('\r\n');
  const answered = new Promise<string>((resolve) => answers.set(callId, resolve));
  const ended = new Promise<void>((resolve) => byes.set(callId, resolve));
  const sentAt = performance.now();
  sip.send(invite, trunk.port, trunk.host);
  const answer = await answered;
  const port = Number(/^m=audio (\d+)/m.exec(answer)?.[1]);
  const toTag = /^To:.*;tag=([^;\s]+)/m.exec(answer)?.[1];
  sip.send([`ACK sip:+1415${5_000_000 + i}@${trunk.host} SIP/2.0`, `Via: SIP/2.0/UDP 127.0.0.1:${local.port};branch=z9hG4bK${callId}a`, 'Max-Forwards: 70', `From: <sip:+12125550100@${trunk.host}>;tag=f${i}`, `To: ${to};tag=${toTag}`, `Call-ID: ${callId}`, 'CSeq: 1 ACK', 'Content-Length: 0', '', ''].join('\r\n'), trunk.port, trunk.host);
  // The frames go out on one clock for all the floor's calls.
  const stream = { media, port, startedAt: epoch + Math.ceil((performance.now() - epoch) / FRAME_MS) * FRAME_MS, sent: 0, seq: 0, offset: 0 };
  floorStreams.add(stream);
  const setupMs = performance.now() - sentAt;
  await ended;
  floorStreams.delete(stream);
  media.close();
  return { callId, completed: true, endedByFarSide: true, setupMs, framesHeard: heard.heard, framesHeardLate: heard.late };
}

const floorFrames = encodeMulaw(agentSpeech);
const floorStreams = new Set<{ media: Socket; port: number; startedAt: number; sent: number; seq: number; offset: number }>();
const epoch = performance.now();
function floorTick(): void {
  const now = performance.now();
  for (const s of floorStreams) {
    const owed = Math.floor((now - s.startedAt + 1) / FRAME_MS) + 1 - s.sent;
    if (owed > 1) floorLate++;
    if (owed > 5) s.sent += owed - 5;
    for (let i = 0; i < Math.min(owed, 5); i++) {
      const packet = Buffer.allocUnsafe(172);
      packet.writeUInt32BE((0x80000000 | s.seq) >>> 0, 0);
      packet.writeUInt32BE((s.sent * 160) >>> 0, 4);
      packet.writeUInt32BE(1, 8);
      if (s.offset + 160 > floorFrames.length) s.offset = 0;
      floorFrames.copy(packet, 12, s.offset, s.offset + 160);
      s.offset += 160;
      s.seq = (s.seq + 1) & 0xffff;
      s.sent++;
      floorSent++;
      s.media.send(packet, s.port, '127.0.0.1');
    }
  }
  setTimeout(floorTick, FRAME_MS - ((performance.now() - epoch) % FRAME_MS));
}

async function openFloor(): Promise<(calls: number, trunk: string, spreadMs: number) => Promise<UaCall[]>> {
  const sip = createSocket('udp4');
  await new Promise<void>((resolve) => sip.bind(0, '127.0.0.1', resolve));
  const answers = new Map<string, (text: string) => void>();
  const byes = new Map<string, () => void>();
  sip.on('message', (data, from) => {
    const text = data.toString('utf8');
    const callId = /^(?:Call-ID|i):\s*(\S+)/im.exec(text)?.[1] ?? '';
    if (text.startsWith('SIP/2.0 200')) answers.get(callId)?.(text);
    else if (text.startsWith('BYE ')) {
      const head = text.split('\r\n').filter((l) => /^(Via|From|To|Call-ID|CSeq):/i.test(l));
      sip.send(['SIP/2.0 200 OK', ...head, 'Content-Length: 0', '', ''].join('\r\n'), from.port, from.address);
      byes.get(callId)?.();
    }
  });
  floorTick();
  return (calls, trunk, spreadMs) => {
    const [host, port] = trunk.split(':');
    return Promise.all(Array.from({ length: calls }, async (_, i) => {
      await placeAt(i, calls, spreadMs);
      return floorCall(sip, answers, byes, { host: host!, port: Number(port) }, i);
    }));
  };
}

// ---- Rounds ----

const driver =
  mode === 'dialer'
    ? new SipDriver({
        agent: benchAgent,
        saveRecording: async (callId, wav) => {
          const file = path.join(recordingsDir, `${callId}.wav`);
          await fs.promises.writeFile(file, wav);
          await fs.promises.rm(file);
          return `file:${file}`;
        },
        log: createLogger('warn'),
        trunkFor: async () => ({ id: 'bench-trunk', address: currentTrunk, transport: 'udp', codecs: ['PCMU', 'PCMA'] }),
        bind: { host: '127.0.0.1', port: 0 },
        ringTimeoutSeconds: 60,
        maxCallSeconds: 600,
      })
    : undefined;
let currentTrunk = '';
const floor = mode === 'floor' ? await openFloor() : undefined;

process.on('message', (m: UaRequest) => {
  if (m.type === 'close') {
    void driver?.close().finally(() => process.exit(0));
    if (!driver) process.exit(0);
    return;
  }
  currentTrunk = m.trunk;
  const [sentBefore, lateBefore] = driver ? [pacer.frames, pacer.lateFrames] : [floorSent, floorLate];
  loop.reset();
  void (driver ? dialerRound(driver, m.calls, m.spreadMs) : floor!(m.calls, m.trunk, m.spreadMs)).then((calls) => {
    const [sent, late] = driver ? [pacer.frames, pacer.lateFrames] : [floorSent, floorLate];
    const reply: UaReply = { type: 'done', calls, framesSent: sent - sentBefore, framesSentLate: late - lateBefore, loopP99Ms: loop.percentile(99) / 1e6, loopMaxMs: loop.max / 1e6 };
    process.send!(reply);
  });
});
process.send!({ type: 'ready' } satisfies UaReply);
