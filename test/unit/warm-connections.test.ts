import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { setTimeout as wait } from 'node:timers/promises';
import { OpenAICompatibleLLM } from '../../src/providers/llm/openai.js';
import { OpenAITTS } from '../../src/providers/tts/openai.js';
import { WARM_REUSE_MS } from '../../src/voice/services.js';

/** An OpenAI-compatible server that only counts the warm-up requests (GET /v1/models) it is sent, and answers them slowly. */
let server: http.Server;
let url: string;
let models = 0;
before(async () => {
  server = http.createServer((req, res) => {
    if (req.method === 'GET' && req.url === '/v1/models') {
      models++;
      setTimeout(() => res.writeHead(200, { 'content-type': 'application/json' }).end('{"object":"list","data":[]}'), 50);
      return;
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
after(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe('warming the AI services’ connections', () => {
  it('sends one warm-up per service for calls starting together, and another once the last is more than a moment old', async () => {
    // Forty clients of one server: twenty LLMs and twenty voices, warming together as calls starting together do.
    const llms = Array.from({ length: 20 }, () => new OpenAICompatibleLLM({ baseUrl: url, apiKey: 'k', model: 'm', timeoutMs: 2000 }));
    const voices = Array.from({ length: 20 }, () => new OpenAITTS({ baseUrl: url, apiKey: 'k', model: 'tts-1', voice: 'alloy', timeoutMs: 2000 }));
    await Promise.all([...llms.map((l) => l.warm()), ...voices.map((v) => v.warm())]);
    // One for the LLMs and one for the voices: a reply's first requests to each go out together,
    // so with both on one server (OpenAI's chat and speech) each needs a connection of its own.
    assert.equal(models, 2, 'one warm-up per service for forty clients of one server');

    // Right after: the connections are taken as warm.
    await Promise.all([...llms.map((l) => l.warm()), ...voices.map((v) => v.warm())]);
    assert.equal(models, 2);

    // Later (a call answered after a quiet moment): warmed again.
    await wait(WARM_REUSE_MS + 50);
    await llms[0]!.warm();
    assert.equal(models, 3);
  });
});
