import type { Writable } from 'node:stream';
import type { WebSocket } from 'ws';
import type { MediaSerializer } from './provider.js';

/** A connection whose writes can be held back and sent together. */
export type Corkable = Pick<Writable, 'cork' | 'uncork'>;

/**
 * Sends a play to the provider's media stream: its 20 ms media messages and the mark that tells
 * when it has played. They are held back and written to the connection under the WebSocket in one
 * go (one system call), rather than one write each.
 */
export function writePlay(ws: WebSocket, socket: Corkable | undefined, serializer: MediaSerializer, pcm: Int16Array, mark: string): void {
  socket?.cork();
  try {
    for (const frame of serializer.audio(pcm)) ws.send(frame);
    ws.send(serializer.mark(mark));
  } finally {
    socket?.uncork();
  }
}
