/**
 * Small helpers of the emulator: provider ids, a tolerant XML reader for TwiML / Plivo XML,
 * and posting signed callbacks to Dialer.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { send } from '../lib/http-client.js';
import { plivoRequestSignatureV3, twilioRequestSignature } from './signing.js';
import type { EmulatedCall } from './types.js';

export const hex = (bytes: number): string => randomBytes(bytes).toString('hex');
export const twilioId = (prefix: string): string => `${prefix}${hex(16)}`;
export const uuid = (): string => randomUUID();
export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, Math.max(0, ms)));

/** Exotel's "YYYY-MM-DD HH:mm:ss". */
export function exotelTime(date = new Date()): string {
  return date.toISOString().replace('T', ' ').slice(0, 19);
}

/** Plivo's "YYYY-MM-DD HH:mm:ss+00:00". */
export const plivoTime = (date = new Date()): string => `${exotelTime(date)}+00:00`;

// ---------------------------------------------------------------------------------------------
// XML

export interface XmlNode {
  name: string;
  attrs: Record<string, string>;
  children: XmlNode[];
  /** Concatenated direct text (entities decoded, trimmed). */
  text: string;
}

function decodeEntities(s: string): string {
  return s.replace(/&(#x[0-9a-f]+|#\d+|amp|lt|gt|quot|apos);/gi, (m, e: string) => {
    const l = e.toLowerCase();
    if (l === 'amp') return '&';
    if (l === 'lt') return '<';
    if (l === 'gt') return '>';
    if (l === 'quot') return '"';
    if (l === 'apos') return "'";
    if (l.startsWith('#x')) return String.fromCodePoint(parseInt(l.slice(2), 16));
    if (l.startsWith('#')) return String.fromCodePoint(parseInt(l.slice(1), 10));
    return m;
  });
}

/** Parses one XML document into its root element. Throws on malformed markup. */
export function parseXml(xml: string): XmlNode {
  const root: XmlNode = { name: '#document', attrs: {}, children: [], text: '' };
  const stack: XmlNode[] = [root];
  const texts: string[][] = [[]];
  const re = /<!--[\s\S]*?-->|<\?[\s\S]*?\?>|<!\[CDATA\[([\s\S]*?)\]\]>|<!DOCTYPE[^>]*>|<(\/?)([A-Za-z_][\w.:-]*)((?:\s+[\w.:-]+\s*=\s*(?:"[^"]*"|'[^']*'))*)\s*(\/?)>|([^<]+)|(<)/g;
  let m: RegExpExecArray | null;
  while ((m = re.exec(xml))) {
    const top = stack[stack.length - 1]!;
    if (m[7]) throw new Error(`malformed XML near offset ${m.index}`);
    if (m[6] !== undefined) texts[texts.length - 1]!.push(decodeEntities(m[6]));
    else if (m[1] !== undefined) texts[texts.length - 1]!.push(m[1]);
    else if (m[3]) {
      if (m[2] === '/') {
        if (top.name !== m[3]) throw new Error(`XML: </${m[3]}> closes <${top.name}>`);
        top.text = texts.pop()!.join('').trim();
        stack.pop();
        continue;
      }
      const attrs: Record<string, string> = {};
      for (const a of (m[4] ?? '').matchAll(/([\w.:-]+)\s*=\s*(?:"([^"]*)"|'([^']*)')/g)) attrs[a[1]!] = decodeEntities(a[2] ?? a[3] ?? '');
      const node: XmlNode = { name: m[3], attrs, children: [], text: '' };
      top.children.push(node);
      if (!m[5]) {
        stack.push(node);
        texts.push([]);
      }
    }
  }
  if (stack.length !== 1) throw new Error(`XML: <${stack[stack.length - 1]!.name}> is not closed`);
  const element = root.children[0];
  if (!element || root.children.length !== 1) throw new Error('XML: expected one root element');
  return element;
}

// ---------------------------------------------------------------------------------------------
// Callbacks to Dialer

export interface Delivery {
  url: string;
  method?: 'GET' | 'POST';
  params: Record<string, string>;
  /** How to sign it. */
  sign?: { kind: 'twilio' | 'plivo'; authToken: string };
  /** Body encoding for POST (default form). */
  json?: boolean;
  /** For JSON bodies: fields that are not strings (e.g. Exotel's Legs array), replacing those in params. */
  jsonValues?: Record<string, unknown>;
}

export interface Delivered {
  status: number;
  contentType: string;
  body: string;
}

/** Makes one request to Dialer and records it on the call. Never throws: status 0 when Dialer did not answer. */
export async function deliver(call: EmulatedCall, d: Delivery, log: (m: string) => void): Promise<Delivered> {
  const method = d.method ?? 'POST';
  let url = d.url;
  const headers: Record<string, string> = { 'user-agent': 'dialer-provider-emulator' };
  let body: string | undefined;
  if (method === 'GET') {
    const u = new URL(d.url);
    for (const [k, v] of Object.entries(d.params)) u.searchParams.append(k, v);
    url = u.toString();
  } else if (d.json) {
    body = JSON.stringify({ ...d.params, ...d.jsonValues });
    headers['content-type'] = 'application/json';
  } else {
    body = new URLSearchParams(d.params).toString();
    headers['content-type'] = 'application/x-www-form-urlencoded';
  }
  if (d.sign?.kind === 'twilio') headers['x-twilio-signature'] = twilioRequestSignature(d.sign.authToken, url, method === 'GET' ? {} : d.params);
  if (d.sign?.kind === 'plivo') {
    const nonce = String(Math.floor(Math.random() * 1e20)).padStart(20, '0');
    headers['x-plivo-signature-v3-nonce'] = nonce;
    headers['x-plivo-signature-v3'] = plivoRequestSignatureV3(d.sign.authToken, method, url, nonce, method === 'GET' ? {} : d.params);
  }
  const record = { url, status: 0, body: body ?? '' };
  call.callbacks.push(record);
  try {
    const res = await send(url, { method, headers, ...(body === undefined ? {} : { body }), timeoutMs: 15_000 });
    const text = await res.text();
    record.status = res.status;
    return { status: res.status, contentType: res.contentType, body: text };
  } catch (err) {
    log(`${method} ${url} failed: ${(err as Error).message}`);
    return { status: 0, contentType: '', body: '' };
  }
}
