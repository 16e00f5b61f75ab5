/**
 * SIP messages (RFC 3261) as Dialer reads and writes them over UDP: a start line, headers (compact
 * forms expanded, names kept in lower case), and a body. Only what a user agent placing calls
 * needs: no multipart bodies, no header folding beyond joining continuation lines.
 *
 * Terminology
 * - request / response: a message with a method and Request-URI, or with a status code.
 * - branch: the Via parameter that names a transaction; tag: the From/To parameter that names a
 *   dialog's side; Call-ID + tags name the dialog.
 */

export interface SipRequest {
  kind: 'request';
  method: string;
  uri: string;
  headers: Map<string, string[]>;
  body: string;
}

export interface SipResponse {
  kind: 'response';
  status: number;
  reason: string;
  headers: Map<string, string[]>;
  body: string;
}

export type SipMessage = SipRequest | SipResponse;

const COMPACT: Record<string, string> = {
  i: 'call-id', m: 'contact', e: 'content-encoding', l: 'content-length', c: 'content-type',
  f: 'from', s: 'subject', k: 'supported', t: 'to', v: 'via', o: 'event', r: 'refer-to', b: 'referred-by',
};

/** Headers whose values may hold commas inside one value: never split. */
const UNSPLIT = new Set(['www-authenticate', 'proxy-authenticate', 'authorization', 'proxy-authorization', 'date', 'user-agent', 'server', 'subject']);

export class SipParseError extends Error {
  override name = 'SipParseError';
}

/** Splits a header value on commas that are outside quotes and angle brackets. */
function splitValues(value: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let quoted = false;
  let start = 0;
  for (let i = 0; i < value.length; i++) {
    const ch = value[i];
    if (ch === '"' && value[i - 1] !== '\\') quoted = !quoted;
    else if (!quoted && ch === '<') depth++;
    else if (!quoted && ch === '>') depth--;
    else if (!quoted && depth === 0 && ch === ',') {
      out.push(value.slice(start, i).trim());
      start = i + 1;
    }
  }
  out.push(value.slice(start).trim());
  return out.filter((v) => v !== '');
}

export function parseMessage(data: Buffer | string): SipMessage {
  const text = typeof data === 'string' ? data : data.toString('utf8');
  const split = text.indexOf('\r\n\r\n');
  const head = split === -1 ? text : text.slice(0, split);
  let body = split === -1 ? '' : text.slice(split + 4);
  const lines = head.split(/\r?\n/);
  const start = lines.shift() ?? '';
  const headers = new Map<string, string[]>();
  let last: string | undefined;
  for (const line of lines) {
    if (/^[ \t]/.test(line) && last) {
      const values = headers.get(last)!;
      values[values.length - 1] += ` ${line.trim()}`;
      continue;
    }
    const colon = line.indexOf(':');
    if (colon <= 0) throw new SipParseError(`not a header line: ${JSON.stringify(line.slice(0, 80))}`);
    const raw = line.slice(0, colon).trim().toLowerCase();
    const name = COMPACT[raw] ?? raw;
    const value = line.slice(colon + 1).trim();
    const values = headers.get(name) ?? [];
    values.push(...(UNSPLIT.has(name) ? [value] : splitValues(value)));
    headers.set(name, values);
    last = name;
  }
  const length = headers.get('content-length')?.[0];
  if (length !== undefined && /^\d+$/.test(length)) body = Buffer.from(body, 'utf8').subarray(0, Number(length)).toString('utf8');
  const response = /^SIP\/2\.0 (\d{3}) ?(.*)$/.exec(start);
  if (response) return { kind: 'response', status: Number(response[1]), reason: response[2] ?? '', headers, body };
  const request = /^([A-Z]+) (\S+) SIP\/2\.0$/.exec(start);
  if (request) return { kind: 'request', method: request[1]!, uri: request[2]!, headers, body };
  throw new SipParseError(`not a SIP start line: ${JSON.stringify(start.slice(0, 80))}`);
}

const CANONICAL: Record<string, string> = {
  'call-id': 'Call-ID', cseq: 'CSeq', 'www-authenticate': 'WWW-Authenticate', 'proxy-authenticate': 'Proxy-Authenticate',
  'max-forwards': 'Max-Forwards', 'user-agent': 'User-Agent', 'content-type': 'Content-Type', 'content-length': 'Content-Length',
};

function canonical(name: string): string {
  return CANONICAL[name] ?? name.replace(/(^|-)([a-z])/g, (_m, dash: string, ch: string) => dash + ch.toUpperCase());
}

export function serialize(message: SipMessage): Buffer {
  const start = message.kind === 'request' ? `${message.method} ${message.uri} SIP/2.0` : `SIP/2.0 ${message.status} ${message.reason}`;
  const lines = [start];
  for (const [name, values] of message.headers) {
    if (name === 'content-length') continue;
    for (const value of values) lines.push(`${canonical(name)}: ${value}`);
  }
  lines.push(`Content-Length: ${Buffer.byteLength(message.body, 'utf8')}`);
  return Buffer.from(`${lines.join('\r\n')}\r\n\r\n${message.body}`, 'utf8');
}

export function header(message: SipMessage, name: string): string | undefined {
  return message.headers.get(name)?.[0];
}

/** A `;name=value` parameter of a header value (after its address, when it has one). */
export function param(value: string | undefined, name: string): string | undefined {
  if (!value) return undefined;
  const after = value.includes('>') ? value.slice(value.lastIndexOf('>') + 1) : value;
  const match = new RegExp(`;\\s*${name}=([^;,\\s]+)`, 'i').exec(after);
  return match?.[1];
}

/** The URI inside a name-addr (`"Bob" <sip:bob@host>;tag=x` -> `sip:bob@host`) or a bare addr-spec. */
export function addressUri(value: string): string {
  const lt = value.indexOf('<');
  if (lt !== -1) return value.slice(lt + 1, value.indexOf('>', lt));
  return value.split(';')[0]!.trim();
}

/** host and port of a sip: URI (port 5060 when absent). */
export function uriHostPort(uri: string): { host: string; port: number } {
  const match = /^sips?:(?:[^@]*@)?(\[[^\]]+\]|[^:;>?]+)(?::(\d+))?/i.exec(uri);
  if (!match) throw new SipParseError(`not a SIP URI: ${uri}`);
  return { host: match[1]!.replace(/^\[|\]$/g, ''), port: match[2] ? Number(match[2]) : 5060 };
}

/** The CSeq header: its number and method. */
export function cseq(message: SipMessage): { seq: number; method: string } {
  const [seq, method] = (header(message, 'cseq') ?? '').split(/\s+/);
  return { seq: Number(seq), method: method ?? '' };
}

/** A response to `request`: its Via, From, To, Call-ID and CSeq copied (the To tag added when given). */
export function responseTo(request: SipRequest, status: number, reason: string, options: { toTag?: string; headers?: Array<[string, string]>; body?: string } = {}): SipResponse {
  const headers = new Map<string, string[]>();
  for (const name of ['via', 'from', 'to', 'call-id', 'cseq']) {
    const values = request.headers.get(name);
    if (values) headers.set(name, [...values]);
  }
  const to = headers.get('to')?.[0];
  if (to && options.toTag && !param(to, 'tag')) headers.set('to', [`${to};tag=${options.toTag}`]);
  for (const [name, value] of options.headers ?? []) headers.set(name, [...(headers.get(name) ?? []), value]);
  return { kind: 'response', status, reason, headers, body: options.body ?? '' };
}
