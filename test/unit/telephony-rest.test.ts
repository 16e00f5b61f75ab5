/**
 * The three drivers' REST requests through the shared HTTP client, over real HTTP to a local
 * server: each is traced under the call's span and carries it as `traceparent`, each gives up
 * after its timeout, and only the requests that are safe to repeat are sent again.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, beforeEach, describe, it } from 'node:test';
import { trace } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { createExotelKit } from '../../src/telephony/exotel/index.js';
import { createPlivoKit } from '../../src/telephony/plivo/index.js';
import { ProviderError, type PlaceCallRequest, type ProviderKit } from '../../src/telephony/provider.js';
import { createTwilioKit } from '../../src/telephony/twilio/index.js';
import { startCallSpan } from '../../src/tracing/index.js';

interface Seen {
  method: string;
  path: string;
  traceparent: string | undefined;
}

/** A local stand-in for the three providers' APIs: answers each call creation as its provider does, or holds every request unanswered. */
class Api {
  seen: Seen[] = [];
  /** Hold every request without an answer (a provider that hangs). */
  silent = false;
  url = '';
  private readonly held: http.ServerResponse[] = [];
  private readonly server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      this.seen.push({ method: req.method ?? '', path: req.url ?? '', traceparent: req.headers.traceparent as string | undefined });
      if (this.silent) return void this.held.push(res);
      const path = req.url ?? '';
      const body = path.endsWith('/Calls.json')
        ? { sid: 'CA1' }
        : path.endsWith('/Call/')
          ? { request_uuid: 'c5b1bd0e-0000-4000-8000-000000000001' }
          : path.endsWith('/Calls/connect.json')
            ? { Call: { Sid: 'exo-1' } }
            : {};
      res.writeHead(req.method === 'DELETE' ? 204 : 201, { 'content-type': 'application/json' });
      res.end(req.method === 'DELETE' ? undefined : JSON.stringify(body));
    });
  });
  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }
  reset(silent = false): void {
    this.release();
    this.seen = [];
    this.silent = silent;
  }
  release(): void {
    for (const res of this.held.splice(0)) res.destroy();
  }
  close(): Promise<void> {
    this.release();
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

const api = new Api();
const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
const TIMEOUT_MS = 300;

before(async () => {
  trace.setGlobalTracerProvider(provider);
  await api.start();
});
after(async () => {
  await api.close();
  await provider.shutdown();
  trace.disable();
});
beforeEach(() => {
  api.reset();
  exporter.reset();
});

const kits: Array<[string, () => ProviderKit]> = [
  ['Twilio', () => createTwilioKit({ accountSid: 'AC0123', authToken: 'tw-token', apiBaseUrl: api.url, timeoutMs: TIMEOUT_MS })],
  ['Plivo', () => createPlivoKit({ authId: 'MA0123', authToken: 'pl-token', apiBaseUrl: api.url, timeoutMs: TIMEOUT_MS })],
  [
    'Exotel',
    () => createExotelKit({ accountSid: 'acme1', apiKey: 'k', apiToken: 't', apiBaseUrl: api.url, flowUrl: 'http://my.exotel.com/acme1/exoml/start_voice/1', timeoutMs: TIMEOUT_MS }),
  ],
];

const CALL: PlaceCallRequest = {
  to: '+14155550123',
  from: '+14155550100',
  answerUrl: 'https://dialer.example/api/v1/provider_x/answer?s=tok',
  statusUrl: 'https://dialer.example/api/v1/provider_x/callback/status?s=tok',
  token: 'tok',
  machineDetection: false,
  ringTimeoutSeconds: 30,
  maxDurationSeconds: 600,
};

const callSpan = (label: string) => startCallSpan({ leadId: `lead-${label}`, attempt: 1, provider: label });

for (const [label, kit] of kits) {
  describe(`${label} REST through the shared HTTP client`, () => {
    it('traces the call creation under the call span and sends it as traceparent', async () => {
      const call = callSpan(label);
      const { callSid } = await kit().placeCall(CALL, call.context);
      call.end({ callId: callSid, kind: 'completed', outcome: 'conversation_completed' });
      assert.equal(api.seen.length, 1);
      const header = api.seen[0]!.traceparent;
      assert.ok(header, 'the request carries traceparent');
      const [version, traceId, parentId, flags] = header.split('-');
      assert.equal(version, '00');
      assert.equal(flags, '01');
      const spans = exporter.getFinishedSpans();
      const request = spans.find((s) => s.name === `${label} call creation`);
      assert.ok(request, `a span "${label} call creation" among ${spans.map((s) => s.name).join(', ')}`);
      const root = spans.find((s) => s.name === 'call')!;
      assert.equal(traceId, root.spanContext().traceId);
      assert.equal(request.spanContext().traceId, root.spanContext().traceId);
      assert.equal(request.parentSpanContext?.spanId, root.spanContext().spanId);
      assert.equal(parentId, request.spanContext().spanId, 'the provider sees the request span as its parent');
      assert.equal(request.attributes['http.request.method'], 'POST');
      assert.equal(request.attributes['http.response.status_code'], 201);
      assert.equal(request.attributes['dialer.provider_label'], label);
    });

    it('sends no traceparent when the call is not traced', async () => {
      await kit().placeCall(CALL);
      assert.equal(api.seen.length, 1);
      assert.equal(api.seen[0]!.traceparent, undefined);
      assert.equal(exporter.getFinishedSpans().length, 0);
    });

    it('gives up on a provider that does not answer, and does not ask for the call twice', async () => {
      api.reset(true);
      const call = callSpan(label);
      await assert.rejects(kit().placeCall(CALL, call.context), (err: unknown) => {
        assert.ok(err instanceof ProviderError);
        assert.equal(err.retryable, true);
        assert.equal(err.status, undefined);
        assert.match(err.message, new RegExp(`^${label} could not be reached .*no answer within ${TIMEOUT_MS} ms`));
        return true;
      });
      // The first request may have created the call: it is not sent again.
      assert.equal(api.seen.length, 1);
      const request = exporter.getFinishedSpans().find((s) => s.name === `${label} call creation`);
      assert.ok(request);
      assert.equal(request.status.message, `no answer within ${TIMEOUT_MS} ms`);
    });
  });
}

describe('hang-ups are safe to repeat', () => {
  for (const [label, kit] of kits.filter(([name]) => name !== 'Exotel')) {
    it(`${label}: a hang-up that times out is sent again, traced, three times in all`, async () => {
      api.reset(true);
      const call = callSpan(label);
      await assert.rejects(kit().hangup('CA-or-uuid', call.context), (err: unknown) => {
        assert.ok(err instanceof ProviderError);
        assert.match(err.message, new RegExp(`no answer within ${TIMEOUT_MS} ms`));
        return true;
      });
      assert.equal(api.seen.length, 3);
      const traceId = call.span.spanContext().traceId;
      for (const seen of api.seen) assert.equal(seen.traceparent?.split('-')[1], traceId);
    });
  }
});
