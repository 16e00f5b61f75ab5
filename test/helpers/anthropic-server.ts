/**
 * A local server speaking Anthropic's Messages API as its public documentation gives it:
 * `POST /v1/messages` with `stream: true` answers server-sent events (`message_start`,
 * `content_block_start`/`_delta`/`_stop` for text and `tool_use` blocks, `message_delta` with the
 * stop reason and usage, `message_stop`, a `ping`), errors as `{type: 'error', error: {type,
 * message}}` with their HTTP status, and `GET /v1/models`. Replies are scripted, in order.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export type AnthropicReply =
  | { text?: string; tools?: Array<{ name: string; input: Record<string, unknown> }> }
  | { status: number; type: string; message: string }
  /** A stream that sends `error` after its first text block starts (e.g. overloaded_error). */
  | { streamError: string; message: string }
  /** A stream cut before message_stop. */
  | { cut: true };

export interface AnthropicServer {
  url: string;
  replies: AnthropicReply[];
  requests: Array<{ headers: http.IncomingHttpHeaders; body: any }>;
  close(): Promise<void>;
}

export async function startAnthropicServer(): Promise<AnthropicServer> {
  const replies: AnthropicReply[] = [];
  const requests: AnthropicServer['requests'] = [];
  let ids = 0;
  const server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      if (req.method === 'GET' && req.url === '/v1/models') {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ data: [{ type: 'model', id: 'claude-sonnet-4-5' }], has_more: false }));
        return;
      }
      if (req.method !== 'POST' || req.url !== '/v1/messages') {
        res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ type: 'error', error: { type: 'not_found_error', message: 'Not found' } }));
        return;
      }
      const body = JSON.parse(raw);
      requests.push({ headers: req.headers, body });
      const reply = replies.shift() ?? { text: 'OK.' };
      if ('status' in reply) {
        res.writeHead(reply.status, { 'content-type': 'application/json' }).end(JSON.stringify({ type: 'error', error: { type: reply.type, message: reply.message } }));
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      const event = (type: string, data: Record<string, unknown>) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
      event('message_start', { message: { id: `msg_${++ids}`, type: 'message', role: 'assistant', model: body.model, content: [], stop_reason: null, usage: { input_tokens: 120, output_tokens: 1 } } });
      event('ping', {});
      let index = 0;
      if ('streamError' in reply || 'cut' in reply) {
        event('content_block_start', { index, content_block: { type: 'text', text: '' } });
        event('content_block_delta', { index, delta: { type: 'text_delta', text: 'Hel' } });
        if ('streamError' in reply) event('error', { error: { type: reply.streamError, message: reply.message } });
        res.end();
        return;
      }
      if (reply.text) {
        event('content_block_start', { index, content_block: { type: 'text', text: '' } });
        // Two deltas: the client must join them.
        const half = Math.ceil(reply.text.length / 2);
        event('content_block_delta', { index, delta: { type: 'text_delta', text: reply.text.slice(0, half) } });
        event('content_block_delta', { index, delta: { type: 'text_delta', text: reply.text.slice(half) } });
        event('content_block_stop', { index });
        index++;
      }
      for (const tool of reply.tools ?? []) {
        event('content_block_start', { index, content_block: { type: 'tool_use', id: `toolu_${++ids}`, name: tool.name, input: {} } });
        // The input's JSON in pieces, split inside a string, as the API streams it.
        const json = JSON.stringify(tool.input);
        for (let i = 0; i < json.length; i += 7) event('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: json.slice(i, i + 7) } });
        event('content_block_stop', { index });
        index++;
      }
      event('message_delta', { delta: { stop_reason: reply.tools?.length ? 'tool_use' : 'end_turn', stop_sequence: null }, usage: { output_tokens: 25 } });
      event('message_stop', {});
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    replies,
    requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
