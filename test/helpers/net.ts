import fs from 'node:fs';
import net from 'node:net';

/**
 * The kernel's range of ephemeral ports (those a listen on port 0 or an outgoing connection is
 * given), from /proc; Linux's default when it cannot be read.
 */
function ephemeralRange(): [number, number] {
  try {
    const [low, high] = fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
    if (low !== undefined && high !== undefined && low > 0 && high >= low) return [low, high];
  } catch {
    // Not Linux, or no /proc: the default range.
  }
  return [32768, 60999];
}

/** The ports this process has handed out, never handed out again. */
const handedOut = new Set<number>();

/**
 * A TCP port free on 127.0.0.1 right now (for a server that must know its URL before it listens).
 * It is taken below the kernel's ephemeral range: a port from that range, closed again, may be
 * given at once to the next server that listens on port 0 (a local test server started before
 * Dialer) or to an outgoing connection, and Dialer's listen then fails with EADDRINUSE. Where there
 * is no room below the range, the kernel chooses.
 */
export async function freePort(): Promise<number> {
  const [low] = ephemeralRange();
  const from = 10_000;
  if (low - from >= 1_000) {
    for (let tries = 0; tries < 50; tries++) {
      const port = from + Math.floor(Math.random() * (low - from));
      if (handedOut.has(port)) continue;
      if (await listenable(port)) {
        handedOut.add(port);
        return port;
      }
    }
  }
  return kernelPort();
}

/** Whether a server can listen on `port` of 127.0.0.1 now. */
function listenable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** A port the kernel chose for a listen on port 0, closed again. */
function kernelPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}
