/**
 * Server-sent events as the HTML spec defines them: lines, `data:` fields joined by newlines, an
 * event per blank line, comments (`:`) ignored. Yields each event's data.
 */
export async function* readServerSentEvents(body: AsyncIterable<Uint8Array>, signal?: AbortSignal): AsyncIterable<string> {
  const decoder = new TextDecoder();
  let buffer = '';
  let data: string[] = [];
  for await (const value of body) {
    if (signal?.aborted) return;
    buffer += decoder.decode(value, { stream: true });
    let newline: number;
    while ((newline = buffer.search(/\r\n|\r|\n/)) >= 0) {
      const line = buffer.slice(0, newline);
      buffer = buffer.slice(newline + (buffer.startsWith('\r\n', newline) ? 2 : 1));
      if (line === '') {
        if (data.length > 0) yield data.join('\n');
        data = [];
      } else if (line.startsWith(':')) continue;
      else {
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        let value = colon < 0 ? '' : line.slice(colon + 1);
        if (value.startsWith(' ')) value = value.slice(1);
        if (field === 'data') data.push(value);
      }
    }
  }
  if (data.length > 0) yield data.join('\n');
}
