/**
 * The part of @roamhq/wrtc (libwebrtc for Node) Dialer uses, typed here: the package's own types
 * lean on the DOM library, which a Node service does not load. Loaded lazily, so processes that
 * never take a WebRTC session never load the native binding.
 */
import { createRequire } from 'node:module';

export type { IceServer } from '../config/webrtc.js';
import type { IceServer } from '../config/webrtc.js';

export interface AudioData {
  samples: Int16Array;
  sampleRate: number;
  bitsPerSample?: number;
  channelCount?: number;
  numberOfFrames?: number;
}

export interface MediaStreamTrack {
  readonly kind: string;
  stop(): void;
}

export interface DataChannel {
  readonly label: string;
  readonly readyState: 'connecting' | 'open' | 'closing' | 'closed';
  send(data: string): void;
  close(): void;
  onopen: (() => void) | null;
  onclose: (() => void) | null;
  onmessage: ((event: { data: unknown }) => void) | null;
}

export interface SessionDescription {
  type: 'offer' | 'answer' | 'pranswer' | 'rollback';
  sdp: string;
}

export type ConnectionState = 'new' | 'connecting' | 'connected' | 'disconnected' | 'failed' | 'closed';

export interface PeerConnection {
  readonly connectionState: ConnectionState;
  readonly iceGatheringState: 'new' | 'gathering' | 'complete';
  readonly localDescription: SessionDescription | null;
  addTrack(track: MediaStreamTrack, ...streams: unknown[]): unknown;
  setRemoteDescription(description: SessionDescription): Promise<void>;
  createAnswer(): Promise<SessionDescription>;
  setLocalDescription(description: SessionDescription): Promise<void>;
  close(): void;
  onconnectionstatechange: (() => void) | null;
  onicegatheringstatechange: (() => void) | null;
  ontrack: ((event: { track: MediaStreamTrack }) => void) | null;
  ondatachannel: ((event: { channel: DataChannel }) => void) | null;
}

export interface AudioSink {
  stop(): void;
  ondata: ((data: AudioData) => void) | null;
}

export interface AudioSource {
  createTrack(): MediaStreamTrack;
  onData(data: AudioData): void;
}

export interface Wrtc {
  RTCPeerConnection: new (config: { iceServers: IceServer[] }) => PeerConnection;
  nonstandard: {
    RTCAudioSink: new (track: MediaStreamTrack) => AudioSink;
    RTCAudioSource: new () => AudioSource;
  };
}

let loaded: Wrtc | undefined;

export function wrtc(): Wrtc {
  loaded ??= createRequire(import.meta.url)('@roamhq/wrtc') as Wrtc;
  return loaded;
}
