/**
 * Outbound HTTP under the policy: the one way Dialer sends a request that a tenant can steer.
 * - before each request (and each redirect hop): scheme, credentials, literal addresses;
 * - at connect time: the resolved addresses of a host name, through the agent's own DNS lookup,
 *   so a name that resolves to a refused address (or rebinds to one after a write-time check) is
 *   never connected to;
 * - redirects are followed by hand (at most MAX_REDIRECTS), each hop checked again; callers that
 *   count a redirect as a failure (webhooks) ask for `redirect: 'manual'`.
 * A refused request throws OutboundBlockedError without opening a connection.
 */
import dns from 'node:dns';
import type { LookupAddress, LookupOptions } from 'node:dns';
import { Agent, fetch as undiciFetch } from 'undici';
import { literalAddress, OutboundPolicy, type OutboundAllowList } from './policy.js';

const MAX_REDIRECTS = 5;
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

/** A request the policy refused; nothing was sent. `message` is safe to show the tenant. */
export class OutboundBlockedError extends Error {
  override name = 'OutboundBlockedError';
  readonly code = 'ERR_OUTBOUND_BLOCKED';
}

/** Fetch's shape, as callers (hooks, pre-checks, webhooks) use it. */
export type OutboundFetch = (input: string | URL, init?: RequestInit) => Promise<Response>;

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

export class OutboundClient {
  readonly policy: OutboundPolicy;
  private agent: Agent | undefined;

  constructor(allow?: OutboundAllowList) {
    this.policy = new OutboundPolicy(allow);
  }

  /** Fetch under the policy; see the file's comment. */
  readonly fetch: OutboundFetch = async (input, init = {}) => {
    let url = new URL(String(input));
    let method = (init.method ?? 'GET').toUpperCase();
    let body = init.body;
    const headers = new Headers(init.headers);
    for (let hop = 0; ; hop++) {
      this.assertSendable(url);
      let res: Response;
      try {
        res = (await undiciFetch(url, {
          ...(init as object),
          method,
          headers: Object.fromEntries(headers),
          body: body as string | undefined,
          redirect: 'manual',
          dispatcher: this.dispatcher(),
        })) as unknown as Response;
      } catch (err) {
        const cause = (err as Error).cause;
        if (cause instanceof OutboundBlockedError) throw cause;
        throw err;
      }
      const location = res.headers.get('location');
      if (init.redirect === 'manual' || !REDIRECT_STATUSES.has(res.status) || location === null) return res;
      await res.body?.cancel().catch(() => undefined);
      if (init.redirect === 'error') throw new TypeError(`the server redirected to ${location}`);
      if (hop >= MAX_REDIRECTS) throw new OutboundBlockedError(`more than ${MAX_REDIRECTS} redirects`);
      const next = new URL(location, url);
      if (next.origin !== url.origin) {
        headers.delete('authorization');
        headers.delete('cookie');
      }
      if (res.status === 303 || ((res.status === 301 || res.status === 302) && method === 'POST')) {
        method = method === 'HEAD' ? 'HEAD' : 'GET';
        body = undefined;
        headers.delete('content-type');
        headers.delete('content-length');
      }
      url = next;
    }
  };

  /** Releases the pooled connections. */
  async close(): Promise<void> {
    const agent = this.agent;
    this.agent = undefined;
    await agent?.close();
  }

  private assertSendable(url: URL): void {
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new OutboundBlockedError(`${url.protocol} URLs are not called; only http and https`);
    if (url.username !== '' || url.password !== '') throw new OutboundBlockedError('URLs with credentials are not called');
    if (this.policy.hostAllowed(url.hostname)) return;
    const address = literalAddress(url.hostname);
    const why = address && this.policy.addressRefusal(address);
    if (why) throw new OutboundBlockedError(`${url.hostname} is ${why}`);
  }

  private dispatcher(): Agent {
    this.agent ??= new Agent({ connect: { lookup: (hostname: string, options: LookupOptions, callback: LookupCallback) => this.lookup(hostname, options, callback) } });
    return this.agent;
  }

  /** DNS lookup that hands the socket only permitted addresses (net calls it for host names, never for literals). */
  private lookup(hostname: string, options: LookupOptions, callback: LookupCallback): void {
    dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, []);
      const permitted = this.policy.hostAllowed(hostname) ? addresses : addresses.filter((a) => this.policy.addressRefusal(a.address) === undefined);
      if (permitted.length === 0) {
        const why = this.policy.addressRefusal(addresses[0]?.address ?? '') ?? 'not a public address';
        // The address itself is not told: it would map a tenant's name onto the internal network.
        return callback(new OutboundBlockedError(`${hostname} resolves to ${why}`), []);
      }
      if (options.all) return callback(null, permitted);
      return callback(null, permitted[0]!.address, permitted[0]!.family);
    });
  }
}

/**
 * A failed outbound request, in words safe for a tenant to read: whether it was blocked, timed
 * out, refused or unreachable, never which internal address or port answered how.
 */
export function describeOutboundFailure(err: unknown, timeoutMs?: number): string {
  const e = err as Error & { code?: string; cause?: Error & { code?: string } };
  if (e instanceof OutboundBlockedError) return `blocked: ${e.message}`;
  if (e.name === 'TimeoutError' || e.name === 'AbortError') return timeoutMs === undefined ? 'timed out' : `timed out after ${timeoutMs} ms`;
  const code = e.cause?.code ?? e.code ?? '';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'request failed: the host name does not resolve';
  if (code === 'ECONNREFUSED') return 'request failed: the connection was refused';
  if (code === 'ECONNRESET' || code === 'UND_ERR_SOCKET') return 'request failed: the connection was closed';
  if (code.startsWith('UND_ERR_') && code.includes('TIMEOUT')) return 'timed out';
  if (code.startsWith('ERR_TLS') || code.includes('CERT') || code.startsWith('ERR_SSL')) return 'request failed: TLS error';
  return 'request failed';
}

/**
 * Reads at most `maxBytes` of a response body as text (the rest is not downloaded). `truncated`
 * tells that more followed.
 */
export async function readTextLimited(res: Response, maxBytes: number): Promise<{ text: string; truncated: boolean }> {
  const { bytes, truncated } = await readBytesLimited(res, maxBytes);
  const text = new TextDecoder().decode(bytes);
  // A cut may split a multi-byte character: drop the replacement character it leaves.
  return { text: truncated ? text.replace(/\uFFFD$/, '') : text, truncated };
}

/** A response's body, at most `maxBytes` of it (`truncated`: there was more, left unread). */
export async function readBytesLimited(res: Response, maxBytes: number): Promise<{ bytes: Buffer; truncated: boolean }> {
  if (!res.body) return { bytes: Buffer.alloc(0), truncated: false };
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  let truncated = false;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (size + value.byteLength > maxBytes) {
      chunks.push(value.subarray(0, maxBytes - size));
      size = maxBytes;
      truncated = true;
      await reader.cancel().catch(() => undefined);
      break;
    }
    chunks.push(value);
    size += value.byteLength;
  }
  return { bytes: Buffer.concat(chunks), truncated };
}

let strict: OutboundClient | undefined;

/** The policy with nothing allowed: the default of code that was given no client. */
export function strictOutbound(): OutboundClient {
  strict ??= new OutboundClient();
  return strict;
}
