/**
 * A small S3 stand-in for tests: the REST wire protocol of PutObject, GetObject (with Range),
 * HeadObject and DeleteObject, path-style (`/bucket/key`), answering S3's XML errors. Every request must carry an
 * AWS Signature V4 `Authorization` header (its form is checked, not the signature itself).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface S3Request {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
}

export interface S3Server {
  url: string;
  bucket: string;
  objects: Map<string, { body: Buffer; contentType: string }>;
  requests: S3Request[];
  close(): Promise<void>;
}

const SIGV4 = /^AWS4-HMAC-SHA256 Credential=[^/\s]+\/\d{8}\/[a-z0-9-]+\/s3\/aws4_request, ?SignedHeaders=[a-z0-9;-]+, ?Signature=[0-9a-f]{64}$/;

function xmlError(res: http.ServerResponse, status: number, code: string, message: string, extra: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/xml', ...extra });
  res.end(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>${code}</Code><Message>${message}</Message><RequestId>test</RequestId></Error>`);
}

export async function startS3Server(bucket = 'dialer-test'): Promise<S3Server> {
  const objects = new Map<string, { body: Buffer; contentType: string }>();
  const requests: S3Request[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://localhost');
      requests.push({ method: req.method ?? '', path: url.pathname, headers: req.headers });
      const auth = String(req.headers.authorization ?? '');
      if (!SIGV4.test(auth) || !req.headers['x-amz-date'] || !req.headers['x-amz-content-sha256']) {
        return xmlError(res, 403, 'AccessDenied', 'Missing or malformed AWS Signature Version 4');
      }
      const [, b, ...rest] = url.pathname.split('/');
      const key = decodeURIComponent(rest.join('/'));
      if (b !== bucket) return xmlError(res, 404, 'NoSuchBucket', 'The specified bucket does not exist');
      if (!key) return xmlError(res, 400, 'InvalidRequest', 'Only object requests are served here');

      if (req.method === 'PUT') {
        const body = Buffer.concat(chunks);
        objects.set(key, { body, contentType: String(req.headers['content-type'] ?? 'binary/octet-stream') });
        res.writeHead(200, { etag: '"test"' });
        return res.end();
      }
      if (req.method === 'DELETE') {
        // DeleteObject answers 204 whether or not the key existed.
        objects.delete(key);
        res.writeHead(204);
        return res.end();
      }
      const obj = objects.get(key);
      if (req.method === 'HEAD') {
        if (!obj) {
          res.writeHead(404);
          return res.end();
        }
        res.writeHead(200, { 'content-length': obj.body.length, 'content-type': obj.contentType, 'accept-ranges': 'bytes', etag: '"test"' });
        return res.end();
      }
      if (req.method !== 'GET') return xmlError(res, 405, 'MethodNotAllowed', 'The specified method is not allowed');
      if (!obj) return xmlError(res, 404, 'NoSuchKey', 'The specified key does not exist.');
      const range = /^bytes=(\d+)-(\d*)$/.exec(String(req.headers.range ?? ''));
      if (!range) {
        res.writeHead(200, { 'content-length': obj.body.length, 'content-type': obj.contentType, 'accept-ranges': 'bytes', etag: '"test"' });
        return res.end(obj.body);
      }
      const start = Number(range[1]);
      const end = Math.min(range[2] ? Number(range[2]) : obj.body.length - 1, obj.body.length - 1);
      if (start >= obj.body.length) return xmlError(res, 416, 'InvalidRange', 'The requested range is not satisfiable', { 'content-range': `bytes */${obj.body.length}` });
      res.writeHead(206, {
        'content-length': end - start + 1,
        'content-range': `bytes ${start}-${end}/${obj.body.length}`,
        'content-type': obj.contentType,
        'accept-ranges': 'bytes',
        etag: '"test"',
      });
      res.end(obj.body.subarray(start, end + 1));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    bucket,
    objects,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
