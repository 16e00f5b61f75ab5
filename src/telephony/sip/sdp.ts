/**
 * The SDP of one audio call (RFC 4566, offer/answer of RFC 3264): Dialer offers G.711 (the trunk's
 * codecs, in its order) and telephone-events on one RTP port; the answer picks the codec. On a
 * call that comes in, the trunk offers and Dialer answers with one codec of the offer (the first
 * the trunk allows) and the offer's telephone-event format, under the offer's payload types.
 */
export type Codec = 'PCMU' | 'PCMA';

/** Static payload types of G.711 (RFC 3551). */
export const CODEC_PAYLOAD: Readonly<Record<Codec, number>> = { PCMU: 0, PCMA: 8 };
export const TELEPHONE_EVENT_PAYLOAD = 101;

export interface MediaOffer {
  address: string;
  port: number;
  codecs: Codec[];
  sessionId: number;
  version: number;
}

export function offer(o: MediaOffer): string {
  const types = [...o.codecs.map((c) => CODEC_PAYLOAD[c]), TELEPHONE_EVENT_PAYLOAD];
  return [
    'v=0',
    `o=dialer ${o.sessionId} ${o.version} IN IP4 ${o.address}`,
    's=Dialer',
    `c=IN IP4 ${o.address}`,
    't=0 0',
    `m=audio ${o.port} RTP/AVP ${types.join(' ')}`,
    ...o.codecs.map((c) => `a=rtpmap:${CODEC_PAYLOAD[c]} ${c}/8000`),
    `a=rtpmap:${TELEPHONE_EVENT_PAYLOAD} telephone-event/8000`,
    `a=fmtp:${TELEPHONE_EVENT_PAYLOAD} 0-16`,
    'a=ptime:20',
    'a=sendrecv',
    '',
  ].join('\r\n');
}

export interface RemoteMedia {
  address: string;
  port: number;
  codec: Codec;
  payloadType: number;
  /** The far side's telephone-event payload type, when it offered or accepted events. */
  eventPayloadType?: number;
}

export class SdpError extends Error {
  override name = 'SdpError';
}

/** Reads the far side's audio stream from an SDP, choosing the first of its formats that Dialer offered. */
export function readRemote(sdp: string, accepted: readonly Codec[]): RemoteMedia {
  const lines = sdp.split(/\r?\n/).map((l) => l.trim());
  let sessionAddress: string | undefined;
  let mediaAddress: string | undefined;
  let port: number | undefined;
  let formats: number[] = [];
  const rtpmap = new Map<number, string>();
  let inAudio = false;
  for (const line of lines) {
    if (line.startsWith('m=')) {
      const match = /^m=(\S+) (\d+)(?:\/\d+)? \S+ (.*)$/.exec(line);
      inAudio = match?.[1] === 'audio' && port === undefined;
      if (inAudio && match) {
        port = Number(match[2]);
        formats = match[3]!.split(/\s+/).map(Number);
      }
    } else if (line.startsWith('c=')) {
      const address = /^c=IN IP[46] ([^/\s]+)/.exec(line)?.[1];
      if (port === undefined && !inAudio) sessionAddress = address;
      else if (inAudio) mediaAddress = address;
    } else if (inAudio && line.startsWith('a=rtpmap:')) {
      const match = /^a=rtpmap:(\d+) ([^/]+)\/(\d+)/.exec(line);
      if (match) rtpmap.set(Number(match[1]), `${match[2]!.toLowerCase()}/${match[3]}`);
    }
  }
  const address = mediaAddress ?? sessionAddress;
  if (port === undefined || !address) throw new SdpError('the SDP has no audio stream with an address');
  if (port === 0) throw new SdpError('the far side refused the audio stream (port 0)');
  const nameOf = (pt: number) => rtpmap.get(pt) ?? (pt === 0 ? 'pcmu/8000' : pt === 8 ? 'pcma/8000' : '');
  for (const pt of formats) {
    const codec = accepted.find((c) => nameOf(pt) === `${c.toLowerCase()}/8000`);
    if (codec) {
      const event = formats.find((f) => nameOf(f) === 'telephone-event/8000');
      return { address, port, codec, payloadType: pt, ...(event !== undefined ? { eventPayloadType: event } : {}) };
    }
  }
  throw new SdpError(`the far side offers none of ${accepted.join(', ')}`);
}

/** The answer to an offer whose stream `remote` was read with readRemote: one codec, and telephone-events when offered. */
export function answer(remote: RemoteMedia, local: { address: string; port: number; sessionId: number }): string {
  const types = [remote.payloadType, ...(remote.eventPayloadType !== undefined ? [remote.eventPayloadType] : [])];
  return [
    'v=0',
    `o=dialer ${local.sessionId} 1 IN IP4 ${local.address}`,
    's=Dialer',
    `c=IN IP4 ${local.address}`,
    't=0 0',
    `m=audio ${local.port} RTP/AVP ${types.join(' ')}`,
    `a=rtpmap:${remote.payloadType} ${remote.codec}/8000`,
    ...(remote.eventPayloadType !== undefined ? [`a=rtpmap:${remote.eventPayloadType} telephone-event/8000`, `a=fmtp:${remote.eventPayloadType} 0-16`] : []),
    'a=ptime:20',
    'a=sendrecv',
    '',
  ].join('\r\n');
}
