/**
 * Tracing pieces without a call: the OTEL_* settings, and the flow engine's llm and hook spans
 * (failures, retries, an untraced session) seen through the SDK's in-memory exporter.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, beforeEach, describe, it } from 'node:test';
import { SpanStatusCode, context, trace } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { parseOtlpHeaders, startCallSpan, tracingSettings } from '../../src/tracing/index.js';
import type { Flow } from '../../src/templates/index.js';
import { createFlowSession, type AgentAction } from '../../src/voice/flow/index.js';
import { ScriptedLLM, type ScriptedReply } from '../helpers/scripted-llm.js';

describe('tracing settings', () => {
  it('is off without an OTLP endpoint, and when the SDK or the traces exporter is disabled', () => {
    assert.equal(tracingSettings({}).tracesUrl, undefined);
    assert.equal(tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SDK_DISABLED: 'true' }).tracesUrl, undefined);
    assert.equal(tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_TRACES_EXPORTER: 'none' }).tracesUrl, undefined);
  });

  it('appends /v1/traces to the base endpoint (Langfuse: .../api/public/otel) and takes the traces endpoint as it is', () => {
    assert.equal(tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'https://cloud.langfuse.com/api/public/otel/' }).tracesUrl, 'https://cloud.langfuse.com/api/public/otel/v1/traces');
    assert.equal(
      tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://b:4318/custom' }).tracesUrl,
      'http://b:4318/custom',
    );
    assert.equal(tracingSettings({}).serviceName, 'dialer');
    assert.equal(tracingSettings({ OTEL_SERVICE_NAME: 'dialer-eu' }).serviceName, 'dialer-eu');
    assert.throws(() => tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' }), /OTEL_EXPORTER_OTLP_ENDPOINT must be an http\(s\) URL/);
  });

  it('reads OTLP headers: a base64 value keeps its "=", values are percent-decoded, traces headers win', () => {
    assert.deepEqual(parseOtlpHeaders('H', 'Authorization=Basic cGs6c2s=, x-tenant = acme'), { Authorization: 'Basic cGs6c2s=', 'x-tenant': 'acme' });
    assert.deepEqual(parseOtlpHeaders('H', 'Authorization=Basic%20cGs6c2s%3D'), { Authorization: 'Basic cGs6c2s=' });
    assert.deepEqual(
      tracingSettings({ OTEL_EXPORTER_OTLP_HEADERS: 'a=1,b=2', OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'b=3' }).headers,
      { a: '1', b: '3' },
    );
    assert.throws(() => parseOtlpHeaders('OTEL_EXPORTER_OTLP_HEADERS', 'novalue'), /OTEL_EXPORTER_OTLP_HEADERS must be key=value pairs/);
  });
});

describe('spans of the flow engine', () => {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  let server: http.Server;
  let hookUrl: string;
  let failFirst = false;
  let seen = 0;

  before(async () => {
    trace.setGlobalTracerProvider(provider);
    server = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        seen++;
        if (failFirst && seen === 1) return void res.writeHead(503).end('busy');
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    hookUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    server.closeAllConnections();
    server.close();
    await provider.shutdown();
    trace.disable();
  });
  beforeEach(() => {
    exporter.reset();
    seen = 0;
    failFirst = false;
  });

  const flow = (): Flow => ({
    initial_node: 'greet',
    nodes: [
      {
        node_name: 'greet',
        task_messages: [{ role: 'system', content: 'Ask to confirm.' }],
        functions: [{ name: 'confirm', properties: {}, required: [], hooks: [{ name: 'crm', http_request: { url: `${hookUrl}/x`, method: 'PUT' } }] }],
      },
    ],
  });

  async function drain(actions: AsyncIterable<AgentAction>): Promise<void> {
    for await (const _ of actions);
  }

  function session(replies: ScriptedReply[], traced = true) {
    const root = trace.getTracer('test').startSpan('turn');
    const parent = trace.setSpan(context.active(), root);
    const s = createFlowSession(flow(), { llm: new ScriptedLLM(replies), variables: {}, ...(traced ? { traceParent: () => parent } : {}) });
    return { s, root };
  }

  it('a hook retried after a 503 is one hook span with its attempts, status and host; the llm spans are generations under the turn', async () => {
    failFirst = true;
    const { s, root } = session([{ text: ['Confirm?'] }, { tools: [{ name: 'confirm', arguments: {} }] }, { text: ['Done.'] }]);
    await drain(s.start(new AbortController().signal));
    await drain(s.userTurn('yes', new AbortController().signal));
    root.end();
    const spans = exporter.getFinishedSpans();
    const rootId = root.spanContext().spanId;
    const llms = spans.filter((x) => x.name === 'llm');
    assert.equal(llms.length, 3);
    for (const l of llms) {
      assert.equal(l.parentSpanContext?.spanId, rootId);
      assert.equal(l.attributes['langfuse.observation.type'], 'generation');
      assert.equal(l.attributes['gen_ai.request.model'], 'script');
      assert.equal(l.attributes['gen_ai.usage.input_tokens'], 10);
      assert.equal(l.attributes['gen_ai.usage.output_tokens'], 5);
      assert.equal(l.attributes['dialer.aborted'], false);
    }
    const [hook, ...more] = spans.filter((x) => x.name === 'hook');
    assert.equal(more.length, 0);
    assert.equal(hook!.parentSpanContext?.spanId, rootId);
    assert.equal(hook!.attributes['http.request.method'], 'PUT');
    assert.equal(hook!.attributes['server.address'], '127.0.0.1');
    assert.equal(hook!.attributes['http.response.status_code'], 200);
    assert.equal(hook!.attributes['dialer.hook.attempts'], 2);
    assert.equal(hook!.status.code, SpanStatusCode.UNSET);
  });

  it('a failed LLM request is an llm span with status ERROR and the exception recorded', async () => {
    failFirst = false;
    const { s, root } = session([{ text: ['Hel'], fail: 'model overloaded' }]);
    await drain(s.start(new AbortController().signal));
    root.end();
    const [llm] = exporter.getFinishedSpans().filter((x) => x.name === 'llm');
    assert.equal(llm!.status.code, SpanStatusCode.ERROR);
    assert.match(llm!.status.message ?? '', /model overloaded/);
    assert.equal(llm!.events[0]?.name, 'exception');
  });

  it('an untraced session (no parent) makes no span', async () => {
    const { s, root } = session([{ text: ['Confirm?'] }], false);
    await drain(s.start(new AbortController().signal));
    root.end();
    assert.deepEqual(exporter.getFinishedSpans().map((x) => x.name), ['turn']);
  });

  it('the call span carries the scores it ends with, and its trace id is the one to store on the lead', () => {
    const call = startCallSpan({ leadId: 'lead-1', attempt: 2, template: 't', provider: 'PROVIDER_B', executionMode: 'telephony' });
    call.callId('CA123');
    call.end({ kind: 'completed', outcome: 'confirmed', scores: { sentiment: 0.8, turn_latency_p50_ms: 700 } });
    const [span] = exporter.getFinishedSpans();
    assert.equal(span!.spanContext().traceId, call.traceId);
    assert.equal(span!.parentSpanContext, undefined);
    assert.equal(span!.attributes['dialer.score.sentiment'], 0.8);
    assert.equal(span!.attributes['dialer.score.turn_latency_p50_ms'], 700);
    assert.equal(span!.attributes['langfuse.session.id'], 'CA123');
    assert.equal(span!.attributes['dialer.attempt'], 2);
  });
});
