/**
 * WebRTC settings from the environment. ICE servers: STUN by default none
 * (host candidates suffice on one network); real networks set WEBRTC_STUN_URLS and, behind strict
 * NATs, a TURN server.
 */
import { ConfigError, type Env } from './env.js';

/** A STUN or TURN server, as RTCPeerConnection takes it. */
export interface IceServer {
  urls: string | string[];
  username?: string;
  credential?: string;
}

export interface WebRtcSettings {
  /** Given to Dialer's peer and to clients (the offer's answer carries them). */
  iceServers: IceServer[];
  /** A peer that has not connected this long after its offer is given up. */
  connectTimeoutMs: number;
  /** A peer disconnected this long (no ICE restart brought it back) has gone. */
  disconnectGraceMs: number;
  /** How long a WebRTC recording is kept (7 days by default). */
  recordingRetentionSeconds: number;
  /** Lease on a lead in a session (DIALER_LEASE_SECONDS), renewed every third of it. */
  leaseSeconds: number;
}

function list(raw: string | undefined): string[] {
  return (raw ?? '').split(',').map((s) => s.trim()).filter(Boolean);
}

function seconds(env: Env, name: string, fallback: number): number {
  const raw = env[name]?.trim();
  if (!raw) return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0) throw new ConfigError(`${name} must be a positive number of seconds, got "${raw}"`);
  return n;
}

export function webRtcSettings(env: Env, leaseSeconds = 30): WebRtcSettings {
  const iceServers: IceServer[] = [];
  const stun = list(env.WEBRTC_STUN_URLS);
  for (const url of stun) if (!/^stuns?:/.test(url)) throw new ConfigError(`WEBRTC_STUN_URLS: "${url}" is not a stun: or stuns: URL`);
  if (stun.length > 0) iceServers.push({ urls: stun });
  const turn = list(env.WEBRTC_TURN_URLS);
  for (const url of turn) if (!/^turns?:/.test(url)) throw new ConfigError(`WEBRTC_TURN_URLS: "${url}" is not a turn: or turns: URL`);
  if (turn.length > 0) {
    const username = env.WEBRTC_TURN_USERNAME?.trim();
    const credential = env.WEBRTC_TURN_CREDENTIAL?.trim();
    if (!username || !credential) throw new ConfigError('WEBRTC_TURN_URLS needs WEBRTC_TURN_USERNAME and WEBRTC_TURN_CREDENTIAL');
    iceServers.push({ urls: turn, username, credential });
  }
  return {
    iceServers,
    connectTimeoutMs: seconds(env, 'WEBRTC_CONNECT_TIMEOUT_SECONDS', 30) * 1000,
    disconnectGraceMs: seconds(env, 'WEBRTC_DISCONNECT_GRACE_SECONDS', 5) * 1000,
    recordingRetentionSeconds: seconds(env, 'WEBRTC_RECORDING_RETENTION_DAYS', 7) * 86_400,
    leaseSeconds,
  };
}
