/**
 * Server-sent events over fetch (EventSource cannot send the bearer token): the parser reads
 * `event:` / `data:` lines; the connection is made again after a drop, until stopped.
 */
import { headers, url } from './client.js';

export type EventHandler = (event: string, data: unknown) => void;

export function subscribe(path: string, query: Record<string, string | boolean | undefined>, onEvent: EventHandler): () => void {
  const ctl = new AbortController();
  let retryMs = 1000;
  const run = async () => {
    while (!ctl.signal.aborted) {
      try {
        const res = await fetch(url(path, query), { headers: headers({ accept: 'text/event-stream' }), signal: ctl.signal });
        if (res.status === 401 || res.status === 403 || res.status === 400) return;
        if (!res.ok || !res.body) throw new Error(`events: ${res.status}`);
        retryMs = 1000;
        const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
        let buffer = '';
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buffer += value;
          let cut: number;
          while ((cut = buffer.indexOf('\n\n')) >= 0) {
            const block = buffer.slice(0, cut);
            buffer = buffer.slice(cut + 2);
            let event = 'message';
            let data = '';
            for (const line of block.split('\n')) {
              if (line.startsWith('event:')) event = line.slice(6).trim();
              else if (line.startsWith('data:')) data += line.slice(5).trim();
            }
            if (data) onEvent(event, JSON.parse(data));
          }
        }
      } catch (err) {
        if (ctl.signal.aborted) return;
      }
      await new Promise((r) => setTimeout(r, retryMs));
      retryMs = Math.min(retryMs * 2, 15_000);
    }
  };
  void run();
  return () => ctl.abort();
}
