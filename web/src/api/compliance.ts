/** Do-not-call lists, subject access, erasure and retention, typed by the server's schemas. */
import type { Static } from 'typebox';
import { ApiError, headers, http, url } from './client.js';
import type { Paged, Problem } from './types.js';
import type { DncList as DncListSchema, ImportResult as ImportResultSchema, Lookup as LookupSchema } from '../../../src/compliance/schema.js';
import type {
  ErasureBody as ErasureBodySchema,
  ErasureResult as ErasureResultSchema,
  ExportDocument as ExportSchema,
  Retention as RetentionSchema,
  RetentionBody as RetentionBodySchema,
} from '../../../src/privacy/schema.js';

export type DncList = Static<typeof DncListSchema>;
export type ImportResult = Static<typeof ImportResultSchema>;
export type Lookup = Static<typeof LookupSchema>;
export type ErasureResult = Static<typeof ErasureResultSchema>;
export type ExportDocument = Static<typeof ExportSchema>;
export type Retention = Static<typeof RetentionSchema>;

const at = (id: string) => `/dnc-lists/${encodeURIComponent(id)}`;

export const dncLists = {
  list: (signal?: AbortSignal) => http.get<Paged<DncList>>('/dnc-lists', { page_size: 1000 }, signal),
  create: (body: { name: string; source?: string; version?: string; reseller_id?: string }) => http.post<DncList>('/dnc-lists', body),
  remove: (id: string) => http.delete<DncList>(at(id)),
  lookup: (id: string, phone: string) => http.get<Lookup>(`${at(id)}/numbers/${encodeURIComponent(phone)}`),
  /**
   * Sends a CSV file as the import's streamed body, reporting the share uploaded as it goes (an
   * XMLHttpRequest: fetch reports no upload progress).
   */
  import: (id: string, file: Blob, options: { version?: string; mode?: 'append' | 'replace' }, onProgress: (sent: number, total: number) => void) =>
    new Promise<ImportResult>((resolve, reject) => {
      const xhr = new XMLHttpRequest();
      xhr.open('POST', url(`${at(id)}/import`, options));
      for (const [k, v] of Object.entries(headers({ 'content-type': 'text/csv' }))) xhr.setRequestHeader(k, v);
      xhr.upload.onprogress = (e) => onProgress(e.loaded, e.lengthComputable ? e.total : file.size);
      xhr.onload = () => {
        let body: unknown;
        try {
          body = JSON.parse(xhr.responseText);
        } catch {
          body = undefined;
        }
        if (xhr.status >= 200 && xhr.status < 300) resolve(body as ImportResult);
        else reject(new ApiError(xhr.status, (body as Problem) ?? { type: 'about:blank', title: xhr.statusText, status: xhr.status, detail: xhr.statusText, code: 'http' }));
      };
      xhr.onerror = () => reject(new ApiError(0, { type: 'about:blank', title: 'Network error', status: 0, detail: 'Dialer cannot be reached.', code: 'network' }));
      xhr.send(file);
    }),
};

export const privacy = {
  export: (phone_number: string) => http.get<ExportDocument>('/privacy/export', { phone_number }),
  erase: (body: Static<typeof ErasureBodySchema>) => http.post<ErasureResult>('/privacy/erasure', body),
  retention: (reseller_id: string | undefined, signal?: AbortSignal) => http.get<Retention>('/privacy/retention', { reseller_id }, signal),
  setRetention: (body: Static<typeof RetentionBodySchema>) => http.put<Retention>('/privacy/retention', body),
};
