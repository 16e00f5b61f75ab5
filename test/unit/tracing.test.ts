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
import { startCallSpan } from '../../src/tracing/index.js';
import { parseOtlpHeaders, tracingSettings } from '../../src/config/tracing.js';
import type { Flow } from '../../src/templates/index.js';
import { createFlowSession, type AgentAction } from '../../src/voice/flow/index.js';
import type { CallIO, PlayResult } from '../../src/voice/agent.js';
import { frame } from '../../src/voice/frames.js';
import { ConversationMetrics } from '../../src/voice/metrics.js';
import { Pipeline } from '../../src/voice/pipeline.js';
import { OutputProcessor } from '../../src/voice/processors/output.js';
import { CallTrace } from '../../src/voice/tracing.js';
import { ScriptedLLM, type ScriptedReply } from '../helpers/scripted-llm.js';
import { OutboundClient, parseOutboundAllowList } from '../../src/lib/outbound/index.js';
import { TEST_OUTBOUND_ALLOW } from '../helpers/app.js';

const outbound = new OutboundClient(parseOutboundAllowList(TEST_OUTBOUND_ALLOW));

const tick = () => new Promise((r) => setTimeout(r, 0));

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

  it('reads the batch processor and attribute length settings (the SDK does not read them from the environment)', () => {
    const settings = tracingSettings({ OTEL_BSP_SCHEDULE_DELAY: '200', OTEL_BSP_MAX_QUEUE_SIZE: '4096', OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT: '8192' });
    assert.deepEqual(settings.batch, { scheduledDelayMillis: 200, maxQueueSize: 4096 });
    assert.equal(settings.attributeValueLengthLimit, 8192);
    assert.deepEqual(tracingSettings({}).batch, {});
    assert.throws(() => tracingSettings({ OTEL_BSP_SCHEDULE_DELAY: 'soon' }), /OTEL_BSP_SCHEDULE_DELAY must be a positive whole number/);
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
  let traceparents: Array<string | undefined> = [];

  before(async () => {
    trace.setGlobalTracerProvider(provider);
    server = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        seen++;
        traceparents.push(req.headers.traceparent as string | undefined);
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
    await outbound.close();
    await provider.shutdown();
    trace.disable();
  });
  beforeEach(() => {
    exporter.reset();
    seen = 0;
    failFirst = false;
    traceparents = [];
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
    const s = createFlowSession(flow(), { llm: new ScriptedLLM(replies), variables: {}, fetch: outbound.fetch, ...(traced ? { traceParent: () => parent } : {}) });
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
    // Both requests carry the hook span as their W3C parent, so a traced CRM continues the call's trace.
    const { traceId, spanId } = hook!.spanContext();
    assert.deepEqual(traceparents, [`00-${traceId}-${spanId}-01`, `00-${traceId}-${spanId}-01`]);
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

  it('an untraced session (no parent) makes no span and sends no trace context', async () => {
    const { s, root } = session([{ tools: [{ name: 'confirm', arguments: {} }] }, { text: ['Done.'] }], false);
    await drain(s.start(new AbortController().signal));
    root.end();
    assert.deepEqual(exporter.getFinishedSpans().map((x) => x.name), ['turn']);
    assert.deepEqual(traceparents, [undefined]);
  });

  it('a turn span ends when its reply was heard, or at the barge-in that cut it, with what the caller heard and its latency', async () => {
    const call = trace.getTracer('test').startSpan('call');
    const callTrace = new CallTrace(trace.setSpan(context.active(), call), { stt: 'stt-x', tts: 'tts-x' });
    const played: Array<(r: PlayResult) => void> = [];
    const io: CallIO = {
      sampleRateHz: 8000,
      signal: new AbortController().signal,
      play: () => new Promise((resolve) => played.push(resolve)),
      clear: () => {
        for (const resolve of played.splice(0)) resolve('cleared');
      },
      hangup: () => undefined,
      transfer: async () => undefined,
      onAudio: () => undefined,
      onDtmf: () => undefined,
    };
    const metrics = new ConversationMetrics((turn, latencyMs, overheadMs) => callTrace.latency(turn, latencyMs, overheadMs));
    const output = new OutputProcessor(io, metrics, {
      spoke: (turn, text) => callTrace.heard(turn, text),
      ended: () => undefined,
      transferred: () => undefined,
      turnOver: (turn, interrupted) => callTrace.endTurn(turn, { interrupted, node: 'greet' }),
    });
    const pipeline = new Pipeline([output], { sink: () => undefined });
    const audio = (text: string, turn: number) => frame({ kind: 'output_audio' as const, pcm: new Int16Array(160), sampleRateHz: 8000, text, turn, last: true });

    callTrace.startTurn(1, 'greeting', performance.now());
    pipeline.send(audio('One.', 1));
    pipeline.send(audio('Two.', 1));
    await tick();
    played.shift()!('played');
    await tick();
    pipeline.send(frame({ kind: 'interruption' as const }));
    await tick();

    const speechStart = performance.now() - 900;
    const speechEnd = performance.now() - 300;
    callTrace.startTurn(2, 'user', speechStart, 'Who is this?');
    callTrace.stt(2, { startedAt: speechStart, endedAt: speechEnd, finalWaitMs: 120, text: 'Who is this?' });
    metrics.turnStarted(2, speechEnd);
    pipeline.send(audio('Acme.', 2));
    pipeline.send(frame({ kind: 'turn_done' as const, turn: 2 }));
    await tick();
    assert.equal(exporter.getFinishedSpans().filter((x) => x.name === 'turn').length, 1, 'turn 2 is not over before its reply was heard');
    played.shift()!('played');
    await tick();
    callTrace.close();
    call.end();

    const turns = exporter.getFinishedSpans().filter((x) => x.name === 'turn');
    const [first, second] = turns as [(typeof turns)[number], (typeof turns)[number]];
    assert.equal(first.attributes['dialer.turn.index'], 1);
    assert.equal(first.attributes['dialer.turn.interrupted'], true);
    assert.equal(first.attributes['langfuse.observation.output'], 'One.');
    assert.equal(second.attributes['dialer.turn.interrupted'], false);
    assert.equal(second.attributes['dialer.turn.kind'], 'user');
    assert.equal(second.attributes['langfuse.observation.input'], 'Who is this?');
    assert.equal(second.attributes['langfuse.observation.output'], 'Acme.');
    assert.equal(second.attributes['dialer.node'], 'greet');
    assert.equal(typeof second.attributes['dialer.turn.latency_ms'], 'number');
    for (const t of turns) assert.equal(t.parentSpanContext?.spanId, call.spanContext().spanId);
    const [stt] = exporter.getFinishedSpans().filter((x) => x.name === 'stt');
    assert.equal(stt!.parentSpanContext?.spanId, second.spanContext().spanId);
    assert.equal(stt!.attributes['dialer.stt.final_wait_ms'], 120);
    assert.equal(stt!.attributes['dialer.stt.service'], 'stt-x');
    // The stt span starts with the caller's speech, as its turn does (each span maps the clock itself: within a ms).
    const ms = (t: [number, number]) => t[0] * 1000 + t[1] / 1e6;
    assert.ok(Math.abs(ms(stt!.startTime) - ms(second.startTime)) < 2);
    assert.ok(ms(second.endTime) - ms(second.startTime) >= 850, 'the turn began with the speech, before it was created');
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
