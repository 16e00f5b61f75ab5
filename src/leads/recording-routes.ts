/**
 * A call's recording: downloaded with a bearer token (GET /leads/recording/{call_sid}), through a
 * short-lived signed link that an <audio> element can play and seek with Range requests (GET
 * /recordings/{call_sid}?expires=&signature=), and as waveform peaks for a player to draw at once.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { App } from '../http/index.js';
import { problems, sendProblem, Timestamp } from '../http/index.js';
import { decodeWav } from '../lib/audio.js';
import { AppError } from '../lib/errors.js';
import { signLink, verifyLink } from '../lib/signed-link.js';
import { parseRangeHeader, resolveRange, type ByteRange, type RecordingStore } from '../recordings/index.js';
import type { LeadRow } from '../lifecycle/index.js';
import type { LeadsService } from './service.js';

const CallSidParams = Type.Object({ call_sid: Type.String({ minLength: 1, maxLength: 200 }) });
const LINK_SECONDS = 15 * 60;
/** Recordings larger than this are not read whole for peaks (15 minutes of 16 kHz stereo is ~58 MB). */
const MAX_PEAKS_BYTES = 64 * 1024 * 1024;

export const RecordingLink = Type.Object({
  path: Type.String({ description: 'The link as a path of this service (for a page served by it)' }),
  url: Type.String({ description: 'The same link, absolute (DIALER_PUBLIC_URL)' }),
  expires_at: Timestamp,
});

export const RecordingPeaks = Type.Object({
  duration_seconds: Type.Number(),
  sample_rate_hz: Type.Integer(),
  peaks: Type.Array(Type.Number({ minimum: 0, maximum: 1 }), { description: 'The loudest sample of each equal slice of the recording, 0..1' }),
});

/** Drops a body that will not be sent (an open file stream would otherwise leak its descriptor). */
function destroy(body: NodeJS.ReadableStream | Buffer): void {
  const stream = body as unknown as { destroy?: () => void };
  if (!Buffer.isBuffer(body) && typeof stream.destroy === 'function') stream.destroy();
}

function notAvailable(lead: LeadRow, callSid: string): AppError {
  return new AppError(
    404,
    'recording_not_available',
    lead.status === 'FINISHED' ? `No recording is stored for call ${callSid}` : `The recording of call ${callSid} is not available yet: the lead is ${lead.status}`,
  );
}

async function openOr503(request: FastifyRequest, recordings: RecordingStore, callSid: string, range?: ByteRange) {
  try {
    return await recordings.open(callSid, range);
  } catch (err) {
    request.log.error({ err, callSid }, 'the recording store failed');
    throw new AppError(503, 'recording_store_unavailable', 'The recording store cannot be reached; try again later', undefined, { cause: err });
  }
}

/** Answers the recording, whole (200) or the Range asked for (206, or 416 past its end). */
async function sendRecording(request: FastifyRequest, reply: FastifyReply, recordings: RecordingStore | undefined, lead: LeadRow, callSid: string) {
  if (!recordings || !lead.recording_url) throw notAvailable(lead, callSid);
  const wanted = parseRangeHeader(request.headers.range);
  const open = (range?: ByteRange) => openOr503(request, recordings, callSid, range);
  // A suffix range (bytes=-n) needs the size first: a range past any end gives it without reading.
  const probe = wanted && 'suffix' in wanted ? await open({ start: Number.MAX_SAFE_INTEGER }) : undefined;
  const first = wanted ? ('suffix' in wanted ? probe : await open({ start: wanted.start, ...(wanted.end !== undefined ? { end: wanted.end } : {}) })) : await open();
  if (!first) throw notAvailable(lead, callSid);
  reply.header('accept-ranges', 'bytes');
  if (!wanted) {
    return reply.code(200).type(first.contentType).header('content-length', first.size).send(first.body);
  }
  const span = resolveRange(wanted, first.size);
  if (!span) {
    destroy(first.body);
    reply.header('content-range', `bytes */${first.size}`);
    return sendProblem(reply, new AppError(416, 'range_not_satisfiable', `The recording has ${first.size} bytes; the requested range ${String(request.headers.range)} selects none of them`));
  }
  const rec = 'suffix' in wanted ? await open(span) : first;
  if (!rec) throw notAvailable(lead, callSid);
  return reply
    .code(206)
    .type(rec.contentType)
    .header('content-range', `bytes ${span.start}-${span.end}/${rec.size}`)
    .header('content-length', span.end - span.start + 1)
    .send(rec.body);
}

async function readAll(body: NodeJS.ReadableStream | Buffer, limit: number): Promise<Buffer | undefined> {
  if (Buffer.isBuffer(body)) return body.length > limit ? undefined : body;
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) {
      destroy(body);
      return undefined;
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/** The loudest sample of each of `count` slices, 0..1. */
export function peaksOf(pcm: Int16Array, count: number): number[] {
  const out: number[] = [];
  const per = pcm.length / count;
  for (let i = 0; i < count; i++) {
    let max = 0;
    const end = Math.min(pcm.length, Math.floor((i + 1) * per));
    for (let j = Math.floor(i * per); j < end; j++) {
      const v = Math.abs(pcm[j]!);
      if (v > max) max = v;
    }
    out.push(Math.round((max / 32768) * 1000) / 1000);
  }
  return out;
}

export interface RecordingRouteDeps {
  leads: LeadsService;
  recordings: RecordingStore | undefined;
  /** Signs and checks recording links. */
  linkKey: Buffer;
  /** Absolute base of the API (DIALER_PUBLIC_URL + prefix), and the prefix alone. */
  publicBase: string;
  prefix: string;
}

export function registerRecordingRoutes(app: App, deps: RecordingRouteDeps): void {
  const { leads, recordings, linkKey } = deps;
  const subject = (callSid: string) => `recording:${callSid}`;

  app.get('/leads/recording/:call_sid', {
    config: { permission: ['leads', 'read'] },
    schema: {
      tags: ['leads'],
      summary: "Download a call's recording (audio/wav) by the lead's call_id (call SID or WebRTC room name); Range requests answer 206",
      params: CallSidParams,
      response: { ...problems(401, 403, 404, 416) },
    },
    handler: async (request, reply) => {
      const callSid = request.params.call_sid;
      return sendRecording(request, reply, recordings, await leads.byCallId(request.principal, callSid), callSid);
    },
  });

  app.get('/leads/recording/:call_sid/link', {
    config: { permission: ['leads', 'read'] },
    schema: {
      tags: ['leads'],
      summary: 'A link to the recording that needs no token for 15 minutes (for an <audio> element, which plays and seeks it with Range requests)',
      params: CallSidParams,
      response: { 200: RecordingLink, ...problems(401, 403, 404) },
    },
    handler: async (request) => {
      const callSid = request.params.call_sid;
      const lead = await leads.byCallId(request.principal, callSid);
      if (!lead.recording_url) throw notAvailable(lead, callSid);
      const expiresAt = new Date(Date.now() + LINK_SECONDS * 1000);
      const { expires, signature } = signLink(linkKey, subject(callSid), expiresAt);
      const tail = `/recordings/${encodeURIComponent(callSid)}?expires=${expires}&signature=${signature}`;
      return { path: `${deps.prefix}${tail}`, url: `${deps.publicBase}${tail}`, expires_at: new Date(expires * 1000).toISOString() };
    },
  });

  app.get('/recordings/:call_sid', {
    // The signature is the permission: it was made for a caller allowed to read this lead.
    config: { public: true },
    schema: {
      tags: ['leads'],
      summary: 'The recording behind a signed link from GET /leads/recording/{call_sid}/link; Range requests answer 206',
      security: [],
      params: CallSidParams,
      querystring: Type.Object({ expires: Type.Integer({ minimum: 0 }), signature: Type.String({ minLength: 1, maxLength: 200 }) }),
      response: { ...problems(400, 403, 404, 416) },
    },
    handler: async (request, reply) => {
      const callSid = request.params.call_sid;
      if (!verifyLink(linkKey, subject(callSid), request.query)) {
        throw new AppError(403, 'link_invalid', 'This recording link is invalid or has expired; ask for a new one (GET /leads/recording/{call_sid}/link)');
      }
      const lead = await leads.byCallIdUnscoped(callSid);
      reply.header('cache-control', 'private, max-age=600');
      return sendRecording(request, reply, recordings, lead, callSid);
    },
  });

  app.get('/leads/recording/:call_sid/peaks', {
    config: { permission: ['leads', 'read'] },
    schema: {
      tags: ['leads'],
      summary: "The recording's waveform: its duration and the peak of each of `count` equal slices",
      params: CallSidParams,
      querystring: Type.Object({ count: Type.Optional(Type.Integer({ minimum: 10, maximum: 4000, default: 800 })) }),
      response: { 200: RecordingPeaks, ...problems(400, 401, 403, 404, 413) },
    },
    handler: async (request) => {
      const callSid = request.params.call_sid;
      const lead = await leads.byCallId(request.principal, callSid);
      if (!recordings || !lead.recording_url) throw notAvailable(lead, callSid);
      const rec = await openOr503(request, recordings, callSid);
      if (!rec) throw notAvailable(lead, callSid);
      const bytes = await readAll(rec.body, MAX_PEAKS_BYTES);
      if (!bytes) throw new AppError(413, 'recording_too_large', `The recording is larger than ${MAX_PEAKS_BYTES} bytes; its peaks are not computed`);
      let wav;
      try {
        wav = decodeWav(bytes);
      } catch (err) {
        throw new AppError(404, 'recording_unreadable', `The recording of call ${callSid} is not a readable WAV file: ${(err as Error).message}`);
      }
      const count = request.query.count ?? 800;
      return { duration_seconds: wav.pcm.length / wav.sampleRateHz, sample_rate_hz: wav.sampleRateHz, peaks: peaksOf(wav.pcm, count) };
    },
  });
}
