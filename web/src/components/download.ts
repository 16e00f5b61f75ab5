import { headers, url } from '../api/client.js';
import { ApiError } from '../api/client.js';

/** Fetches a file with the session's token and hands it to the browser as a download. */
export async function downloadCsv(path: string, query: Record<string, string>, fallbackName: string, extraHeaders: Record<string, string> = {}): Promise<void> {
  const res = await fetch(url(path, query), { headers: headers(extraHeaders) });
  if (!res.ok) {
    const problem = await res.json().catch(() => ({ title: res.statusText, detail: res.statusText, status: res.status, type: 'about:blank', code: 'http' }));
    throw new ApiError(res.status, problem);
  }
  const name = /filename="([^"]+)"/.exec(res.headers.get('content-disposition') ?? '')?.[1] ?? fallbackName;
  saveBlob(await res.blob(), name);
}

export function saveBlob(blob: Blob, name: string): void {
  const href = URL.createObjectURL(blob);
  const a = Object.assign(document.createElement('a'), { href, download: name });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(href), 10_000);
}
