/**
 * The relay of `npm run bench:relay-floor`: Twilio media streams in, one OpenAI Realtime WebSocket
 * per call out, and only the work the two protocols force (see bench/relay-floor.ts). Tells its
 * parent its port once listening.
 */
import { WebSocket, WebSocketServer } from 'ws';

const MODEL_URL = process.env.RELAY_MODEL_URL!;
const APPEND_FRAMES = 3; // 60 ms, Dialer's default appends
const FRAME_BYTES = 160;

interface Leg {
  call: WebSocket;
  model: WebSocket;
  streamSid: string;
  pending: Buffer[];
  /** The model's audio not yet played, as 20 ms frames. */
  queue: Buffer[];
}
const legs = new Set<Leg>();

const server = new WebSocketServer({ port: 0, host: '127.0.0.1', path: '/media' });
server.on('connection', (call) => {
  const model = new WebSocket(MODEL_URL);
  const leg: Leg = { call, model, streamSid: '', pending: [], queue: [] };
  legs.add(leg);
  // A socket's failure ends its call, not the relay (the round counts what was played).
  model.on('error', () => call.close());
  call.on('error', () => model.close());
  model.on('message', (data) => {
    const event = JSON.parse(String(data)) as { type: string; delta?: string };
    if (event.type !== 'response.audio.delta' || !event.delta) return;
    const bytes = Buffer.from(event.delta, 'base64');
    for (let at = 0; at < bytes.length; at += FRAME_BYTES) leg.queue.push(bytes.subarray(at, at + FRAME_BYTES));
  });
  call.on('message', (data) => {
    const message = JSON.parse(String(data)) as { event: string; media?: { payload: string }; streamSid?: string };
    if (message.event === 'start') leg.streamSid = message.streamSid ?? '';
    if (message.event !== 'media' || !message.media) return;
    leg.pending.push(Buffer.from(message.media.payload, 'base64'));
    if (leg.pending.length < APPEND_FRAMES || model.readyState !== WebSocket.OPEN) return;
    model.send(JSON.stringify({ type: 'input_audio_buffer.append', audio: Buffer.concat(leg.pending).toString('base64') }));
    leg.pending = [];
  });
  call.on('close', () => {
    legs.delete(leg);
    model.close();
  });
});

// The model's audio played on one clock, a frame per call every 20 ms.
setInterval(() => {
  for (const leg of legs) {
    const frame = leg.queue.shift();
    if (frame && leg.call.readyState === WebSocket.OPEN) leg.call.send(JSON.stringify({ event: 'media', streamSid: leg.streamSid, media: { payload: frame.toString('base64') } }));
  }
}, 20);

server.on('listening', () => process.send!({ port: (server.address() as { port: number }).port }));
process.on('SIGTERM', () => process.exit(0));
