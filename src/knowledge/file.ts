/**
 * A knowledge document's text from a file's bytes: a PDF's text (unpdf, PDF.js inside, in a worker
 * thread: each page's text in reading order, pages apart by a blank line), or a text or Markdown
 * file as it is. Anything else (an image, a word processor's file, an archive) is refused before
 * anything is stored.
 */
import { Worker } from 'node:worker_threads';
import { AppError } from '../lib/errors.js';
import { MAX_DOCUMENT_CHARACTERS, MAX_FILE_BYTES } from './schema.js';

export interface FileText {
  text: string;
  format: 'text' | 'markdown';
  /** A PDF's own title (its document information), when it has one. */
  title?: string;
  kind: 'pdf' | 'text';
}

/** Whether the bytes are a PDF: its header (`%PDF-`) within the first kilobyte, as readers accept it. */
export function isPdf(bytes: Uint8Array): boolean {
  return Buffer.from(bytes.subarray(0, 1024)).includes('%PDF-');
}

function refused(path: string, status: number, code: string, message: string): AppError {
  return new AppError(status, code, message, [{ path, message }]);
}

/**
 * The text of a file. `path`: where the problem points (`/file` or `/url`); `name`: its file name
 * (`.md` is Markdown). Throws 415 `unsupported_document` for a file that is neither PDF nor UTF-8
 * text, 422 `unreadable_document` for a PDF that cannot be read, 422 `empty_document` for one
 * without text (a scan holds pictures of words, not words), 422 `document_too_large`.
 */
export async function readFileText(bytes: Uint8Array, opts: { path: string; name?: string | undefined }): Promise<FileText> {
  if (bytes.byteLength > MAX_FILE_BYTES) throw refused(opts.path, 422, 'document_too_large', `The file is larger than ${MAX_FILE_BYTES / 1_000_000} MB`);
  let result: FileText;
  if (isPdf(bytes)) result = await readPdf(bytes, opts.path);
  else {
    let text: string;
    try {
      text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    } catch {
      text = '\0';
    }
    // NUL and other control characters (tab, line and page breaks apart) mark a binary file.
    if (/[\u0000-\u0008\u000E-\u001F]/.test(text)) {
      throw refused(opts.path, 415, 'unsupported_document', 'The file is neither text nor a PDF (other documents, such as images or word processor files, are not read: save them as PDF or text)');
    }
    result = { text: text.replace(/^\uFEFF/, ''), format: /\.(md|markdown)$/i.test(opts.name ?? '') ? 'markdown' : 'text', kind: 'text' };
  }
  result.text = result.text.replace(/\r\n?/g, '\n').replace(/\n{3,}/g, '\n\n').trim();
  if (!result.text) throw refused(opts.path, 422, 'empty_document', result.kind === 'pdf' ? 'The PDF holds no text (a scanned PDF holds pictures of its words: run it through text recognition first)' : 'The file has no text');
  if (result.text.length > MAX_DOCUMENT_CHARACTERS) throw refused(opts.path, 422, 'document_too_large', `The file's text is ${result.text.length} characters, more than ${MAX_DOCUMENT_CHARACTERS}`);
  return result;
}

/** How long reading one PDF's text may take. */
export const PDF_READ_TIMEOUT_MS = 30_000;

type ThreadResult = { pages: string[]; title: string } | { error: { name: string; message: string } };

/** The PDF's pages' text and its title, read in a worker thread (pdf-thread.mjs) that goes when it answers or runs out of time. */
async function readInThread(bytes: Uint8Array): Promise<ThreadResult> {
  const copy = new Uint8Array(bytes);
  const worker = new Worker(new URL('./pdf-thread.mjs', import.meta.url), { workerData: copy, transferList: [copy.buffer] });
  let timer: NodeJS.Timeout | undefined;
  try {
    return await new Promise<ThreadResult>((resolve) => {
      timer = setTimeout(() => resolve({ error: { name: 'TimeoutError', message: `reading it took longer than ${PDF_READ_TIMEOUT_MS / 1000} s` } }), PDF_READ_TIMEOUT_MS);
      worker.once('message', resolve);
      worker.once('error', (err) => resolve({ error: { name: err.name, message: err.message } }));
      worker.once('exit', (code) => resolve({ error: { name: 'Error', message: `the reader stopped (exit code ${code})` } }));
    });
  } finally {
    clearTimeout(timer);
    await worker.terminate();
  }
}

async function readPdf(bytes: Uint8Array, path: string): Promise<FileText> {
  const read = await readInThread(bytes);
  if ('error' in read) {
    const password = read.error.name === 'PasswordException';
    throw refused(path, 422, 'unreadable_document', password ? 'The PDF is protected by a password: upload it without one' : `The PDF could not be read: ${read.error.message || 'it is damaged'}`);
  }
  return { text: read.pages.map((page) => page.trim()).filter(Boolean).join('\n\n'), format: 'text', kind: 'pdf', ...(read.title ? { title: read.title } : {}) };
}
