/**
 * Telephony settings from the environment: each provider is enabled when its credentials are set.
 * The API base URLs default to the real providers; tests and the offline demo point them at the
 * emulator (`dialer emulator` prints the lines to use).
 */
import { readFileSync } from 'node:fs';
import { ConfigError, httpUrl, text, together, type Env } from './env.js';

export interface TelephonySettings {
  twilio?: { accountSid: string; authToken: string; apiBaseUrl: string };
  exotel?: { accountSid: string; apiKey: string; apiToken: string; apiBaseUrl: string; flowUrl: string };
  plivo?: { authId: string; authToken: string; apiBaseUrl: string };
  /** How long a call may ring before it counts as unanswered. */
  ringTimeoutSeconds: number;
  /** Hard cap on a call's length (the provider ends it). */
  maxCallSeconds: number;
  /** Ask providers that can for answering-machine detection (a machine makes the attempt `voicemail`). */
  machineDetection: boolean;
  /**
   * SIP trunks: where Dialer's SIP user agent binds (RTP binds the same host), the address it puts
   * in its headers and SDP, and PEM of more CAs trusted for TLS trunks (a private carrier's).
   */
  sip: { host: string; port: number; advertise?: string; tlsCa?: string; tlsIdentity?: { cert: string; key: string } };
  /** Accept callbacks without a valid provider signature (never in production; for tunnels that rewrite URLs while debugging). */
  skipSignatureCheck: boolean;
}

function baseUrl(env: Env, name: string, fallback: string): string {
  return httpUrl(name, text(env, name) ?? fallback);
}

function seconds(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = text(env, name);
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw)) throw new ConfigError(`${name} must be a whole number of seconds, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max) throw new ConfigError(`${name} must be between ${min} and ${max}, got ${value}`);
  return value;
}

/** A PEM file named by `name`, read once at the start: one that cannot be read or holds no `marker` stops it. */
function pemFile(name: string, file: string, marker: string): string {
  let pem: string;
  try {
    pem = readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigError(`${name}: cannot read ${file}: ${(err as Error).message}`);
  }
  if (!pem.includes(marker)) throw new ConfigError(`${name}: ${file} is not PEM (no "${marker}")`);
  return pem;
}

/** The TLS settings of SIP: more CAs to trust (DIALER_SIP_TLS_CA), and Dialer's own certificate and key (both or neither). */
function sipTls(env: Env): { tlsCa?: string; tlsIdentity?: { cert: string; key: string } } {
  const ca = text(env, 'DIALER_SIP_TLS_CA');
  const identity = together(env, ['DIALER_SIP_TLS_CERT', 'DIALER_SIP_TLS_KEY']);
  return {
    ...(ca ? { tlsCa: pemFile('DIALER_SIP_TLS_CA', ca, 'BEGIN CERTIFICATE') } : {}),
    ...(identity ? { tlsIdentity: { cert: pemFile('DIALER_SIP_TLS_CERT', identity[0]!, 'BEGIN CERTIFICATE'), key: pemFile('DIALER_SIP_TLS_KEY', identity[1]!, 'PRIVATE KEY') } } : {}),
  };
}

function sipPort(env: Env): number {
  const raw = text(env, 'DIALER_SIP_PORT') ?? '0';
  if (!/^\d+$/.test(raw) || Number(raw) > 65_535) throw new ConfigError(`DIALER_SIP_PORT must be a port number (0-65535), got "${raw}"`);
  return Number(raw);
}

export function telephonySettings(env: Env): TelephonySettings {
  const settings: TelephonySettings = {
    ringTimeoutSeconds: seconds(env, 'DIALER_RING_TIMEOUT_SECONDS', 30, 5, 120),
    maxCallSeconds: seconds(env, 'DIALER_MAX_CALL_SECONDS', 900, 10, 14_400),
    machineDetection: (text(env, 'DIALER_MACHINE_DETECTION') ?? 'true') !== 'false',
    skipSignatureCheck: text(env, 'DIALER_SKIP_CALLBACK_SIGNATURES') === 'true',
    sip: {
      host: text(env, 'DIALER_SIP_HOST') ?? '0.0.0.0',
      port: sipPort(env),
      ...(text(env, 'DIALER_SIP_ADVERTISE') ? { advertise: text(env, 'DIALER_SIP_ADVERTISE')! } : {}),
      ...sipTls(env),
    },
  };
  const twilio = together(env, ['TWILIO_ACCOUNT_SID', 'TWILIO_AUTH_TOKEN']);
  if (twilio) settings.twilio = { accountSid: twilio[0]!, authToken: twilio[1]!, apiBaseUrl: baseUrl(env, 'TWILIO_API_URL', 'https://api.twilio.com') };
  const plivo = together(env, ['PLIVO_AUTH_ID', 'PLIVO_AUTH_TOKEN']);
  if (plivo) settings.plivo = { authId: plivo[0]!, authToken: plivo[1]!, apiBaseUrl: baseUrl(env, 'PLIVO_API_URL', 'https://api.plivo.com') };
  const exotel = together(env, ['EXOTEL_ACCOUNT_SID', 'EXOTEL_API_KEY', 'EXOTEL_API_TOKEN', 'EXOTEL_FLOW_URL']);
  if (exotel) {
    settings.exotel = {
      accountSid: exotel[0]!,
      apiKey: exotel[1]!,
      apiToken: exotel[2]!,
      apiBaseUrl: baseUrl(env, 'EXOTEL_API_URL', 'https://api.exotel.com'),
      flowUrl: baseUrl(env, 'EXOTEL_FLOW_URL', ''),
    };
  }
  return settings;
}
