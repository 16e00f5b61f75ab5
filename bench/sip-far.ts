/**
 * The far side of bench:sip, in a process of its own: a lean SIP user agent server and RTP peer
 * standing for a carrier and its callees. It shares no code with Dialer's SIP stack. Each INVITE
 * gets 100 Trying at once and 200 OK (an SDP answer with PCMU and telephone-events) after a ring
 * time drawn from the round's range; after the ACK it sends speech (G.711 mu-law, 20 ms frames)
 * on one process-wide clock, and after the round's hold time it hangs up with a BYE.
 *
 * It measures what only it can: each call's own answer delay (INVITE handled to 200 OK sent), the
 * frames it sent late itself (more than one frame after their time), the frames it heard from
 * Dialer, and how many calls were up at once.
 *
 * Messages with the bench (process IPC): FarRequest in, FarReply out.
 */
import { createSocket, type RemoteInfo } from 'node:dgram';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { encodeMulaw } from '../src/lib/audio.js';
import { synthesize } from '../src/lib/speech.js';

export type FarRequest = { type: 'round'; ringMinMs: number; ringMaxMs: number; holdMs: number; seed: number } | { type: 'stats' } | { type: 'close' };

export interface FarCall {
  callId: string;
  /** INVITE handled to 200 OK sent, ms: the far side's own part of the call's setup. */
  answerDelayMs: number;
  acked: boolean;
  byeAnswered: boolean;
  framesSent: number;
  framesHeard: number;
}

export type FarReply =
  | { type: 'ready'; sip: string }
  | { type: 'stats'; calls: FarCall[]; peakLive: number; framesSent: number; framesSentLate: number; cpuS: number; lagP99Ms: number };

const FRAME_MS = 20;
const FRAME_BYTES = 160;
const HOST = '127.0.0.1';

interface Call extends FarCall {
  invite: { via: string[]; from: string; to: string; cseq: string; contact: string };
  toTag: string;
  media?: { host: string; port: number };
  startedAt: number;
  seq: number;
  ssrc: number;
  offset: number;
  live: boolean;
  timers: NodeJS.Timeout[];
}

const speech = encodeMulaw(await synthesize('Hello? Yes, this is Sam speaking. I am fine, thank you very much for calling me today. What is this about?', { sampleRateHz: 8000 }));

const sip = createSocket('udp4');
const rtp = createSocket('udp4');
await Promise.all([sip, rtp].map((s) => new Promise<void>((resolve) => s.bind(0, HOST, resolve))));
const sipPort = sip.address().port;
const rtpPort = rtp.address().port;

let calls = new Map<string, Call>();
/** Calls by the port Dialer sends their RTP from (the port of its SDP offer). */
let byMediaPort = new Map<number, Call>();
let round: Extract<FarRequest, { type: 'round' }> = { type: 'round', ringMinMs: 100, ringMaxMs: 100, holdMs: 10_000, seed: 1 };
let seed = 1;
let live = 0;
let peakLive = 0;
let framesSent = 0;
let framesSentLate = 0;
let cpuAtRound = process.cpuUsage();
const lag = monitorEventLoopDelay({ resolution: 10 });
lag.enable();

/** mulberry32: the same ring times run after run. */
function random(): number {
  seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
}

function parse(text: string): { start: string; headers: Map<string, string[]>; body: string } {
  const split = text.indexOf('\r\n\r\n');
  const [start = '', ...lines] = text.slice(0, split < 0 ? undefined : split).split('\r\n');
  const headers = new Map<string, string[]>();
  for (const line of lines) {
    const colon = line.indexOf(':');
    const name = line.slice(0, colon).trim().toLowerCase();
    const long = ({ v: 'via', f: 'from', t: 'to', i: 'call-id', m: 'contact' } as Record<string, string>)[name] ?? name;
    headers.set(long, [...(headers.get(long) ?? []), line.slice(colon + 1).trim()]);
  }
  return { start, headers, body: split < 0 ? '' : text.slice(split + 4) };
}

function send(lines: string[], body: string, to: { address: string; port: number }): void {
  sip.send([...lines, `Content-Length: ${Buffer.byteLength(body)}`, '', body].join('\r\n'), to.port, to.address);
}

function respond(call: Call, status: string, from: RemoteInfo, extra: string[] = [], body = ''): void {
  const i = call.invite;
  send([`SIP/2.0 ${status}`, ...i.via.map((v) => `Via: ${v}`), `From: ${i.from}`, `To: ${i.to};tag=${call.toTag}`, `Call-ID: ${call.callId}`, `CSeq: ${i.cseq}`, ...extra], body, from);
}

function answerSdp(): string {
  return ['v=0', `o=far 1 1 IN IP4 ${HOST}`, 's=far', `c=IN IP4 ${HOST}`, 't=0 0', `m=audio ${rtpPort} RTP/AVP 0 101`, 'a=rtpmap:0 PCMU/8000', 'a=rtpmap:101 telephone-event/8000', 'a=fmtp:101 0-16', 'a=ptime:20', 'a=sendrecv', ''].join('\r\n');
}

function stopMedia(call: Call): void {
  if (!call.live) return;
  call.live = false;
  live--;
  for (const t of call.timers) clearTimeout(t);
}

function onInvite(message: ReturnType<typeof parse>, from: RemoteInfo): void {
  const callId = message.headers.get('call-id')?.[0] ?? '';
  const existing = calls.get(callId);
  if (existing) {
    // A retransmission (our 100 crossed it): say Trying again.
    if (!existing.answerDelayMs) respond(existing, '100 Trying', from);
    return;
  }
  const handledAt = performance.now();
  const sdp = message.body;
  const port = Number(/^m=audio (\d+)/m.exec(sdp)?.[1]);
  const host = /^c=IN IP4 (\S+)/m.exec(sdp)?.[1] ?? HOST;
  const call: Call = {
    callId,
    answerDelayMs: 0,
    acked: false,
    byeAnswered: false,
    framesSent: 0,
    framesHeard: 0,
    invite: { via: message.headers.get('via') ?? [], from: message.headers.get('from')![0]!, to: message.headers.get('to')![0]!, cseq: message.headers.get('cseq')![0]!, contact: message.headers.get('contact')?.[0] ?? '' },
    toTag: `far${calls.size}`,
    media: { host, port },
    startedAt: 0,
    seq: 0,
    ssrc: Math.floor(random() * 2 ** 32),
    offset: Math.floor(random() * (speech.length / FRAME_BYTES)) * FRAME_BYTES,
    live: false,
    timers: [],
  };
  calls.set(callId, call);
  byMediaPort.set(port, call);
  respond(call, '100 Trying', from);
  const ringMs = round.ringMinMs + random() * (round.ringMaxMs - round.ringMinMs);
  setTimeout(() => {
    respond(call, '200 OK', from, [`Contact: <sip:far@${HOST}:${sipPort}>`, 'Content-Type: application/sdp'], answerSdp());
    call.answerDelayMs = performance.now() - handledAt;
  }, ringMs);
}

function onAck(callId: string, from: RemoteInfo): void {
  const call = calls.get(callId);
  if (!call || call.acked) return;
  call.acked = true;
  call.live = true;
  // Its frames fall due on the clock's ticks (late only when a tick is), as Dialer's do.
  call.startedAt = epoch + Math.ceil((performance.now() - epoch) / FRAME_MS) * FRAME_MS;
  live++;
  peakLive = Math.max(peakLive, live);
  call.timers.push(
    setTimeout(() => {
      stopMedia(call);
      const target = /<([^>]+)>/.exec(call.invite.contact)?.[1] ?? `sip:dialer@${from.address}:${from.port}`;
      send(
        [`BYE ${target} SIP/2.0`, `Via: SIP/2.0/UDP ${HOST}:${sipPort};branch=z9hG4bKfar${callId.slice(-12)}`, 'Max-Forwards: 70', `From: ${call.invite.to};tag=${call.toTag}`, `To: ${call.invite.from}`, `Call-ID: ${callId}`, 'CSeq: 1 BYE'],
        '',
        from,
      );
    }, round.holdMs),
  );
}

sip.on('message', (data, from) => {
  const message = parse(data.toString('utf8'));
  const callId = message.headers.get('call-id')?.[0] ?? '';
  if (message.start.startsWith('INVITE ')) return onInvite(message, from);
  if (message.start.startsWith('ACK ')) return onAck(callId, from);
  const call = calls.get(callId);
  if (message.start.startsWith('BYE ')) {
    if (call) {
      stopMedia(call);
      const via = message.headers.get('via') ?? [];
      send(['SIP/2.0 200 OK', ...via.map((v) => `Via: ${v}`), `From: ${message.headers.get('from')![0]}`, `To: ${message.headers.get('to')![0]}`, `Call-ID: ${callId}`, `CSeq: ${message.headers.get('cseq')![0]}`], '', from);
    }
    return;
  }
  if (message.start.startsWith('SIP/2.0 200') && /BYE/.test(message.headers.get('cseq')?.[0] ?? '') && call) call.byeAnswered = true;
});

rtp.on('message', (_data, from) => {
  const call = byMediaPort.get(from.port);
  if (call?.live) call.framesHeard++;
});

/** One clock for every call: each sends the frames it owes (at most five after a stall). */
const epoch = performance.now();
function tick(): void {
  const now = performance.now();
  for (const call of calls.values()) {
    if (!call.live || !call.media) continue;
    const owed = Math.floor((now - call.startedAt + 1) / FRAME_MS) + 1 - call.framesSent;
    if (owed > 1) framesSentLate++;
    // After a stall the oldest frames are skipped as a network would lose them: their sequence
    // numbers too, so the caller's count of frames (and its jitter buffer) stays on time.
    if (owed > 5) {
      call.framesSent += owed - 5;
      call.seq = (call.seq + owed - 5) & 0xffff;
    }
    for (let i = 0; i < Math.min(owed, 5); i++) {
      const packet = Buffer.allocUnsafe(12 + FRAME_BYTES);
      packet[0] = 0x80;
      packet[1] = 0;
      packet.writeUInt16BE(call.seq, 2);
      packet.writeUInt32BE((call.framesSent * FRAME_BYTES) >>> 0, 4);
      packet.writeUInt32BE(call.ssrc, 8);
      if (call.offset + FRAME_BYTES > speech.length) call.offset = 0;
      speech.copy(packet, 12, call.offset, call.offset + FRAME_BYTES);
      call.offset += FRAME_BYTES;
      call.seq = (call.seq + 1) & 0xffff;
      call.framesSent++;
      framesSent++;
      rtp.send(packet, call.media.port, call.media.host);
    }
  }
  setTimeout(tick, FRAME_MS - ((performance.now() - epoch) % FRAME_MS));
}
tick();

process.on('message', (m: FarRequest) => {
  if (m.type === 'round') {
    round = m;
    seed = m.seed;
    calls = new Map();
    byMediaPort = new Map();
    live = 0;
    peakLive = 0;
    framesSent = 0;
    framesSentLate = 0;
    cpuAtRound = process.cpuUsage();
    lag.reset();
  } else if (m.type === 'stats') {
    const cpu = process.cpuUsage(cpuAtRound);
    const reply: FarReply = {
      type: 'stats',
      calls: [...calls.values()].map(({ callId, answerDelayMs, acked, byeAnswered, framesSent: sent, framesHeard }) => ({ callId, answerDelayMs, acked, byeAnswered, framesSent: sent, framesHeard })),
      peakLive,
      framesSent,
      framesSentLate,
      cpuS: (cpu.user + cpu.system) / 1e6,
      lagP99Ms: lag.percentile(99) / 1e6,
    };
    process.send!(reply);
  } else if (m.type === 'close') {
    sip.close();
    rtp.close();
    process.exit(0);
  }
});
process.send!({ type: 'ready', sip: `${HOST}:${sipPort}` } satisfies FarReply);
