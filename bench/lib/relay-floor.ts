/**
 * The relay floor: the least CPU any relay between Twilio media streams and the OpenAI Realtime API
 * spends on this machine, the baseline of `bench:voice AGENT=realtime` and `bench:relay-floor`.
 *
 * The relay (bench/relay-floor-relay.ts, pinned to the CPUs given, as the benches pin Dialer)
 * takes each call's Twilio media WebSocket and opens one WebSocket to the model, as Dialer does,
 * and does only what the two protocols force: every 20 ms frame read, parsed (JSON) and its base64
 * payload decoded; the frames appended to the model in 60 ms pieces (Dialer's default), encoded
 * (base64, JSON) and sent; the model's audio deltas parsed, decoded and written to the call as
 * 20 ms Twilio frames on a clock. Nothing else: no recording, no flow, no database, no metrics.
 *
 * The calling process plays both far ends, as cheaply as it can (prebuilt frames, one clock): N
 * callers sending a frame every 20 ms, and a model that answers each call with 1 s of audio every
 * 4 s (the agent speaking a quarter of the time, about as in bench:voice's calls).
 */
import { fork, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { WebSocket, WebSocketServer } from 'ws';

const FRAME_MS = 20;
const CLK_TCK = 100;

export interface FloorRound {
  calls: number;
  /** The relay's CPU (user + system) per second of each call, seconds. */
  cpuPerCallSecond: number;
  /** The share of a CPU the relay used over the round. */
  cpuShare: number;
  /** Frames the callers sent more than 20 ms late (the far end's own lateness). */
  lateShare: number;
  /** Frames of the model's audio the callers received. */
  heard: number;
  appendsPerCallSecond: number;
}

export interface RelayFloor {
  /** `calls` callers for `seconds`, all at once; resolves when they have hung up. */
  round(calls: number, seconds: number): Promise<FloorRound>;
  close(): Promise<void>;
}

function cpuSeconds(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLK_TCK;
}

/** Starts the relay on `cpus` (none: not pinned), with `nodeArgs` (e.g. --single-threaded-gc). */
export async function startRelayFloor(options: { cpus?: number[]; nodeArgs?: string[] } = {}): Promise<RelayFloor> {
  // The model: one WebSocket per call; appends are counted, and every 4 s it speaks 1 s of audio
  // in 100 ms deltas, as the Realtime API sends them (faster than real time).
  const model = new WebSocketServer({ port: 0, host: '127.0.0.1' });
  let appends = 0;
  const delta = (() => {
    const bytes = Buffer.alloc(800);
    for (let i = 0; i < bytes.length; i++) bytes[i] = 0x80 | ((i * 37) & 0x3f);
    return JSON.stringify({ type: 'response.audio.delta', response_id: 'resp_1', item_id: 'item_1', output_index: 0, content_index: 0, delta: bytes.toString('base64') });
  })();
  const speakers = new Set<WebSocket>();
  model.on('connection', (ws) => {
    speakers.add(ws);
    ws.on('message', (data) => {
      if ((data as Buffer).includes('input_audio_buffer.append')) appends++;
    });
    ws.on('close', () => speakers.delete(ws));
  });
  let second = 0;
  const speaking = setInterval(() => {
    // A quarter of the calls each second: each call speaks once every 4 s.
    let i = 0;
    for (const ws of speakers) if ((i++ + second) % 4 === 0 && ws.readyState === WebSocket.OPEN) for (let d = 0; d < 10; d++) ws.send(delta);
    second++;
  }, 1000);
  await new Promise((r) => model.once('listening', r));
  const modelUrl = `ws://127.0.0.1:${(model.address() as { port: number }).port}`;

  const relay = fork(path.join(import.meta.dirname, '..', 'relay-floor-relay.ts'), [], {
    execArgv: [...(options.nodeArgs ?? []), '--import', 'tsx'],
    env: { ...process.env, RELAY_MODEL_URL: modelUrl },
  });
  if (options.cpus?.length) spawnSync('taskset', ['-a', '-p', '-c', options.cpus.join(','), String(relay.pid)], { stdio: 'ignore' });
  const relayPort = await new Promise<number>((resolve, reject) => {
    relay.once('message', (m: { port: number }) => resolve(m.port));
    relay.once('exit', (code) => reject(new Error(`the relay floor exited (${code})`)));
  });

  // The callers: Twilio's messages (connected, start, a media frame every 20 ms), prebuilt.
  const payloads = Array.from({ length: 50 }, (_, i) => {
    const bytes = Buffer.alloc(160);
    for (let j = 0; j < bytes.length; j++) bytes[j] = 0xff ^ ((i * 13 + j * 7) & 0x1f);
    return bytes.toString('base64');
  });
  let callSeq = 0;

  return {
    async round(calls, seconds) {
      const callers: Array<{ ws: WebSocket; startedAt: number; sent: number; late: number; streamSid: string }> = [];
      for (let i = 0; i < calls; i++) {
        const ws = new WebSocket(`ws://127.0.0.1:${relayPort}/media`);
        await new Promise((r, j) => ws.once('open', r).once('error', j));
        const streamSid = `MZ${String(++callSeq).padStart(32, '0')}`;
        ws.send(JSON.stringify({ event: 'connected', protocol: 'Call', version: '1.0.0' }));
        ws.send(JSON.stringify({ event: 'start', sequenceNumber: '1', start: { streamSid, callSid: `CA${callSeq}`, tracks: ['inbound'], mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 } }, streamSid }));
        callers.push({ ws, startedAt: performance.now(), sent: 0, late: 0, streamSid });
      }
      let heard = 0;
      for (const c of callers) c.ws.on('message', () => heard++);
      const cpuBefore = cpuSeconds(relay.pid!);
      const appendsBefore = appends;
      const from = performance.now();
      const clock = setInterval(() => {
        const now = performance.now();
        for (const c of callers) {
          const due = Math.floor((now - c.startedAt) / FRAME_MS);
          while (c.sent < due) {
            c.sent++;
            if (now - c.startedAt - c.sent * FRAME_MS > FRAME_MS) c.late++;
            c.ws.send(
              `{"event":"media","sequenceNumber":"${c.sent + 1}","media":{"track":"inbound","chunk":"${c.sent}","timestamp":"${c.sent * FRAME_MS}","payload":"${payloads[c.sent % payloads.length]}"},"streamSid":"${c.streamSid}"}`,
            );
          }
        }
      }, 10);
      await new Promise((r) => setTimeout(r, seconds * 1000));
      clearInterval(clock);
      const wallS = (performance.now() - from) / 1000;
      const cpu = cpuSeconds(relay.pid!) - cpuBefore;
      await Promise.all(callers.map((c) => new Promise((r) => (c.ws.once('close', r), c.ws.close()))));
      const sent = callers.reduce((n, c) => n + c.sent, 0);
      return {
        calls,
        cpuPerCallSecond: cpu / (calls * wallS),
        cpuShare: cpu / wallS,
        lateShare: sent ? callers.reduce((n, c) => n + c.late, 0) / sent : 0,
        heard,
        appendsPerCallSecond: (appends - appendsBefore) / (calls * wallS),
      };
    },
    async close() {
      clearInterval(speaking);
      relay.kill('SIGTERM');
      await new Promise((r) => (relay.exitCode !== null ? r(undefined) : relay.once('exit', r)));
      await new Promise((r) => model.close(r));
    },
  };
}

/** One line of a floor round. */
export function floorLine(r: FloorRound): string {
  return (
    `the relay floor used ${r.cpuShare.toFixed(2)} CPU, ${(r.cpuPerCallSecond * 1000).toFixed(2)} ms per call-second ` +
    `(${r.appendsPerCallSecond.toFixed(1)} appends per call-second, ${r.heard} frames played); its callers sent ${(r.lateShare * 100).toFixed(2)}% of their frames late${r.lateShare >= 0.01 ? ' (the far end was the limit)' : ''}`
  );
}
