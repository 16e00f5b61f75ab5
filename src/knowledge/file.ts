/**
 * A knowledge document's text from a file's bytes: a PDF's text (unpdf, PDF.js inside: each page's
 * text in reading order, pages apart by a blank line), or a text or Markdown file as it is. Anything
 * else (an image, a word processor's file, an archive) is refused before anything is stored.
 */
import { extractText, getDocumentProxy } from 'unpdf';
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
    // eslint-disable-next-line no-control-regex
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

async function readPdf(bytes: Uint8Array, path: string): Promise<FileText> {
  try {
    // PDF.js takes the buffer over: it reads a copy.
    const pdf = await getDocumentProxy(new Uint8Array(bytes), { verbosity: 0, isEvalSupported: false });
    try {
      const { text } = await extractText(pdf, { mergePages: false });
      const info = (await pdf.getMetadata().catch(() => undefined))?.info as { Title?: unknown } | undefined;
      const title = typeof info?.Title === 'string' ? info.Title.replace(/\s+/g, ' ').trim() : '';
      return { text: text.map((page) => page.trim()).filter(Boolean).join('\n\n'), format: 'text', kind: 'pdf', ...(title ? { title } : {}) };
    } finally {
      await pdf.destroy();
    }
  } catch (err) {
    const why = err instanceof Error && err.message ? err.message : 'it is damaged';
    const password = err instanceof Error && err.name === 'PasswordException';
    throw refused(path, 422, 'unreadable_document', password ? 'The PDF is protected by a password: upload it without one' : `The PDF could not be read: ${why}`);
  }
}
