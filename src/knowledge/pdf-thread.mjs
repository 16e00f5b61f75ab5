// Reads a PDF's text in a worker thread of its own (file.ts): PDF.js parses on the thread it runs on,
// and a large or hostile PDF must not hold the event loop that paces live calls' audio. Plain
// JavaScript: a worker thread does not inherit the main thread's TypeScript loader.
import { parentPort, workerData } from 'node:worker_threads';
import { extractText, getDocumentProxy } from 'unpdf';

try {
  const pdf = await getDocumentProxy(new Uint8Array(workerData), { verbosity: 0, isEvalSupported: false });
  try {
    const { text } = await extractText(pdf, { mergePages: false });
    const info = (await pdf.getMetadata().catch(() => undefined))?.info;
    const title = typeof info?.Title === 'string' ? info.Title.replace(/\s+/g, ' ').trim() : '';
    parentPort.postMessage({ pages: text, title });
  } finally {
    await pdf.destroy();
  }
} catch (err) {
  parentPort.postMessage({ error: { name: err instanceof Error ? err.name : 'Error', message: err instanceof Error ? err.message : String(err) } });
}
