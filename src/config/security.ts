/**
 * Security settings from the environment: what tenant-steered outbound requests may reach, login
 * throttling, request limits, the client address behind proxies, and how long the audit trail is
 * kept. docs/security.md explains each mechanism.
 */
import { OutboundAllowListError, parseOutboundAllowList, type OutboundAllowList } from '../lib/outbound/index.js';
import { ConfigError, text, wholeNumber, type Env } from './env.js';

export interface LoginThrottleSettings {
  /** Failures allowed per account before attempts wait (DIALER_LOGIN_MAX_FAILURES). */
  accountFailures: number;
  /** Failures allowed per client address (DIALER_LOGIN_MAX_FAILURES_PER_ADDRESS). */
  addressFailures: number;
  /** The first wait; each further failure doubles it (DIALER_LOGIN_BACKOFF_SECONDS). */
  baseSeconds: number;
  /** The longest wait (DIALER_LOGIN_MAX_BACKOFF_SECONDS). */
  maxSeconds: number;
  /** Failures older than this are forgotten (an hour). */
  forgetSeconds: number;
}

export const DEFAULT_LOGIN_THROTTLE: LoginThrottleSettings = { accountFailures: 5, addressFailures: 50, baseSeconds: 1, maxSeconds: 900, forgetSeconds: 3600 };

/** Requests per minute; 0 turns a limit off. docs/security.md lists them with their headers. */
export interface RateLimitSettings {
  /** Per authenticated principal (user or s2s token), every route but the stricter ones (DIALER_RATE_LIMIT). */
  perPrincipal: number;
  /** Per client address, for requests without a principal (DIALER_RATE_LIMIT_ANONYMOUS). */
  perAddress: number;
  /** POST /login, per client address (DIALER_RATE_LIMIT_LOGIN). */
  login: number;
  /** POST /s2s-token, per principal (DIALER_RATE_LIMIT_TOKEN_ISSUE). */
  tokenIssue: number;
}

export interface SecuritySettings {
  /**
   * What tenant-steered outbound requests may reach besides public addresses (DIALER_OUTBOUND_ALLOW),
   * plus the host of DIALER_SERVICE_CALLBACK_URL, which the operator chose.
   */
  outboundAllow: OutboundAllowList;
  loginThrottle: LoginThrottleSettings;
  rateLimits: RateLimitSettings;
  /**
   * Whether X-Forwarded-For names the client (behind a load balancer): Fastify's trustProxy, from
   * DIALER_TRUST_PROXY (`true`, a hop count, or comma-separated addresses/CIDRs of the proxies).
   */
  trustProxy: boolean | number | string[];
  /** How long audit entries are kept (DIALER_AUDIT_RETENTION_DAYS). */
  auditRetentionDays: number;
}

export function securitySettings(env: Env, serviceCallbackUrl: string | undefined): SecuritySettings {
  let outboundAllow: OutboundAllowList;
  try {
    outboundAllow = parseOutboundAllowList(env.DIALER_OUTBOUND_ALLOW);
  } catch (err) {
    if (err instanceof OutboundAllowListError) throw new ConfigError(err.message);
    throw err;
  }
  if (serviceCallbackUrl !== undefined) {
    outboundAllow = { ...outboundAllow, hosts: [...outboundAllow.hosts, new URL(serviceCallbackUrl).hostname.toLowerCase()] };
  }
  return {
    outboundAllow,
    loginThrottle: {
      accountFailures: wholeNumber(env, 'DIALER_LOGIN_MAX_FAILURES', DEFAULT_LOGIN_THROTTLE.accountFailures, 1, 1000),
      addressFailures: wholeNumber(env, 'DIALER_LOGIN_MAX_FAILURES_PER_ADDRESS', DEFAULT_LOGIN_THROTTLE.addressFailures, 1, 100_000),
      baseSeconds: wholeNumber(env, 'DIALER_LOGIN_BACKOFF_SECONDS', DEFAULT_LOGIN_THROTTLE.baseSeconds, 1, 3600),
      maxSeconds: wholeNumber(env, 'DIALER_LOGIN_MAX_BACKOFF_SECONDS', DEFAULT_LOGIN_THROTTLE.maxSeconds, 1, 86_400),
      forgetSeconds: DEFAULT_LOGIN_THROTTLE.forgetSeconds,
    },
    rateLimits: {
      perPrincipal: wholeNumber(env, 'DIALER_RATE_LIMIT', 6000, 0, 10_000_000),
      perAddress: wholeNumber(env, 'DIALER_RATE_LIMIT_ANONYMOUS', 600, 0, 10_000_000),
      login: wholeNumber(env, 'DIALER_RATE_LIMIT_LOGIN', 30, 0, 10_000_000),
      tokenIssue: wholeNumber(env, 'DIALER_RATE_LIMIT_TOKEN_ISSUE', 30, 0, 10_000_000),
    },
    trustProxy: trustProxy(text(env, 'DIALER_TRUST_PROXY')),
    auditRetentionDays: wholeNumber(env, 'DIALER_AUDIT_RETENTION_DAYS', 365, 1, 36_500),
  };
}

function trustProxy(raw: string | undefined): boolean | number | string[] {
  const value = raw ?? '';
  if (value === '' || value === 'false') return false;
  if (value === 'true') return true;
  if (/^\d+$/.test(value)) return Number(value);
  const entries = value
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean);
  for (const entry of entries) {
    if (!/^[0-9a-fA-F.:]+(\/\d{1,3})?$/.test(entry)) {
      throw new ConfigError(`DIALER_TRUST_PROXY must be true, false, a hop count or comma-separated proxy addresses/CIDRs, got "${raw}"`);
    }
  }
  return entries;
}
