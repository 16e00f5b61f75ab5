/**
 * A knowledge document read from a web page: fetched through the outbound URL policy (a tenant's
 * URL is untrusted), and its text taken from the body: HTML as readable text (html-to-text: script,
 * style, navigation and images dropped, links without their addresses, headings on lines of their
 * own), Markdown and plain text as they are; a PDF's text as an uploaded PDF's (file.ts). Other
 * kinds (images …) are refused.
 */
import { convert } from 'html-to-text';
import { describeOutboundFailure, OutboundBlockedError, readBytesLimited, readTextLimited, type OutboundFetch } from '../lib/outbound/index.js';
import { AppError, badRequest } from '../lib/errors.js';
import { readFileText } from './file.js';
import { MAX_DOCUMENT_CHARACTERS, MAX_FILE_BYTES } from './schema.js';

/** How long a page may take to answer, and how much of it is read (HTML weighs more than its text). */
export const PAGE_TIMEOUT_MS = 10_000;
export const PAGE_MAX_BYTES = 2_000_000;

export interface Page {
  text: string;
  format: 'text' | 'markdown';
  /** The page's <title>, when it has one. */
  title?: string;
}

const HTML_OPTIONS = {
  wordwrap: false as const,
  selectors: [
    { selector: 'a', options: { ignoreHref: true } },
    { selector: 'img', format: 'skip' },
    { selector: 'nav', format: 'skip' },
    { selector: 'header', format: 'skip' },
    { selector: 'footer', format: 'skip' },
    { selector: 'form', format: 'skip' },
    ...['h1', 'h2', 'h3', 'h4', 'h5', 'h6'].map((selector) => ({ selector, options: { uppercase: false } })),
  ],
};

function unreadable(message: string, code: string, status = 422): AppError {
  return new AppError(status, code, message, [{ path: '/url', message }]);
}

/** Reads the page at `url`. Throws 4xx problems: a refused address (400), an unreachable page or a failed fetch (422), an unreadable PDF (422), a kind that is neither text nor PDF (415). */
export async function readPage(fetch: OutboundFetch, url: string): Promise<Page> {
  let res: Response;
  try {
    res = await fetch(url, { headers: { accept: 'text/html, text/markdown, text/plain;q=0.9, application/pdf;q=0.8' }, signal: AbortSignal.timeout(PAGE_TIMEOUT_MS) });
  } catch (err) {
    const why = describeOutboundFailure(err, PAGE_TIMEOUT_MS);
    if (err instanceof OutboundBlockedError) throw badRequest(`The URL is not fetched: ${why}`, [{ path: '/url', message: why }], 'url_refused');
    throw unreadable(`The page could not be fetched: ${why}`, 'page_unreachable');
  }
  if (!res.ok) {
    await res.body?.cancel().catch(() => undefined);
    throw unreadable(`The page answered HTTP ${res.status}`, 'page_unreachable');
  }
  const type = (res.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
  const html = type === 'text/html' || type === 'application/xhtml+xml';
  const markdown = type === 'text/markdown' || type === 'text/x-markdown';
  if (type === 'application/pdf' || type === 'application/x-pdf') {
    const { bytes, truncated } = await readBytesLimited(res, MAX_FILE_BYTES);
    if (truncated) throw unreadable(`The PDF is larger than ${MAX_FILE_BYTES / 1_000_000} MB`, 'document_too_large');
    const pdf = await readFileText(bytes, { path: '/url' });
    if (pdf.kind !== 'pdf') throw unreadable('The address answered application/pdf, but what it sent is not a PDF', 'unreadable_document');
    return { text: pdf.text, format: 'text', ...(pdf.title ? { title: pdf.title } : {}) };
  }
  if (!html && !markdown && type !== 'text/plain') {
    await res.body?.cancel().catch(() => undefined);
    throw unreadable(`The page is ${type || 'of no stated type'}, not a web page, text or a PDF`, 'unsupported_document', 415);
  }
  const { text: body, truncated } = await readTextLimited(res, PAGE_MAX_BYTES);
  if (truncated) throw unreadable(`The page is larger than ${PAGE_MAX_BYTES / 1_000_000} MB`, 'document_too_large');
  const text = (html ? convert(body, HTML_OPTIONS) : body).replace(/\n{3,}/g, '\n\n').trim();
  if (!text) throw unreadable('The page has no text', 'empty_document');
  if (text.length > MAX_DOCUMENT_CHARACTERS) throw unreadable(`The page's text is ${text.length} characters, more than ${MAX_DOCUMENT_CHARACTERS}`, 'document_too_large');
  const title = html ? /<title[^>]*>([^<]*)<\/title>/i.exec(body)?.[1]?.replace(/\s+/g, ' ').trim() : undefined;
  return { text, format: markdown ? 'markdown' : 'text', ...(title ? { title: decodeEntities(title) } : {}) };
}

/** The few entities a title commonly holds. */
function decodeEntities(s: string): string {
  return s.replace(/&amp;/g, '&').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&#39;|&apos;/g, "'");
}
