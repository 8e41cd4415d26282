/**
 * A small TCP fault proxy (node:net) for the chaos suite: it sits between Relais and Redis (or any TCP
 * service) and does what toxiproxy would, switchable at run time:
 *
 *   pass       forward both ways
 *   latency    forward both ways, each chunk `ms` later (order kept per direction)
 *   reset      every live connection is reset (RST), and every new one is reset as soon as it is accepted
 *   blackhole  accept, never forward: bytes are swallowed both ways and nobody is told (a partition)
 *   cut_on     forward until a request chunk contains `pattern` (e.g. a BullMQ job id), then swallow:
 *                cut: 'request'  the matching request never reaches the server (killed BEFORE it was stored)
 *                cut: 'reply'    the request reaches the server, no answer ever comes back (killed AFTER it was stored)
 *
 * A connection that swallowed bytes has a broken stream (half a command may have gone through), so
 * when the mode changes away from blackhole/cut_on such connections are destroyed, as TCP keepalive or a
 * kernel timeout would end them after a real partition; the clients reconnect through the new mode.
 */
import { createServer, Socket, type AddressInfo, type Server } from 'node:net';

export type ProxyMode =
  | { kind: 'pass' }
  | { kind: 'latency'; ms: number }
  | { kind: 'reset' }
  | { kind: 'blackhole' }
  | { kind: 'cut_on'; pattern: string; cut: 'request' | 'reply' };

export interface FaultProxy {
  readonly host: string;
  readonly port: number;
  /** e.g. redis://127.0.0.1:PORT (the scheme is only a label for the client). */
  url(scheme?: string): string;
  mode(): ProxyMode;
  /** Switches every live connection and every new one to `mode`. */
  set(mode: ProxyMode): void;
  /** Connections currently open through the proxy. */
  openConnections(): number;
  /** How many times a cut_on pattern was seen (the test waits on it before killing a process). */
  cuts(): number;
  /** Points the proxy at another upstream port (new connections only), e.g. a restarted server. */
  retarget(port: number): void;
  close(): Promise<void>;
}

interface Delayed {
  due: number;
  chunk: Buffer;
}

interface Link {
  client: Socket;
  upstream: Socket;
  /** Swallowing: nothing more is forwarded on this link. */
  broken: boolean;
  /** A cut_on link that saw its pattern; tail bytes of the last request chunk for patterns split across chunks. */
  tail: string;
  /** Per direction: chunks held by latency, in order, each with the time it may go. */
  up: Delayed[];
  down: Delayed[];
}

export async function startFaultProxy(options: {
  targetPort: number;
  targetHost?: string;
  host?: string;
  port?: number;
  mode?: ProxyMode;
}): Promise<FaultProxy> {
  const host = options.host ?? '127.0.0.1';
  const targetHost = options.targetHost ?? '127.0.0.1';
  let targetPort = options.targetPort;
  let current: ProxyMode = options.mode ?? { kind: 'pass' };
  let cutCount = 0;
  const links = new Set<Link>();
  const timers = new Set<NodeJS.Timeout>();

  const destroy = (link: Link, reset: boolean) => {
    links.delete(link);
    for (const socket of [link.client, link.upstream]) {
      if (reset && !socket.destroyed && typeof socket.resetAndDestroy === 'function' && socket.readyState === 'open')
        socket.resetAndDestroy();
      else socket.destroy();
    }
  };

  const later = (ms: number, run: () => void) => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      run();
    }, ms);
    timers.add(timer);
  };

  /** Writes the queue's head once it is due, then the next; one timer per queue at a time. */
  const pump = (link: Link, queue: Delayed[], to: Socket) => {
    const head = queue[0];
    if (!head) return;
    later(Math.max(0, head.due - Date.now()), () => {
      queue.shift();
      if (!link.broken && !to.destroyed) to.write(head.chunk);
      pump(link, queue, to);
    });
  };

  const forward = (link: Link, chunk: Buffer, direction: 'up' | 'down') => {
    const to = direction === 'up' ? link.upstream : link.client;
    if (link.broken) return;
    const mode = current;
    switch (mode.kind) {
      case 'pass':
      case 'latency': {
        const queue = direction === 'up' ? link.up : link.down;
        // Chunks still delayed by an earlier latency mode go first: a byte stream is never reordered.
        if (mode.kind === 'pass' && queue.length === 0) {
          to.write(chunk);
          return;
        }
        queue.push({ due: Date.now() + (mode.kind === 'latency' ? mode.ms : 0), chunk });
        if (queue.length === 1) pump(link, queue, to);
        return;
      }
      case 'reset':
        destroy(link, true);
        return;
      case 'blackhole':
        link.broken = true;
        return;
      case 'cut_on': {
        if (direction === 'down') {
          to.write(chunk);
          return;
        }
        const text = link.tail + chunk.toString('latin1');
        link.tail = text.slice(-Math.max(0, mode.pattern.length - 1));
        if (!text.includes(mode.pattern)) {
          to.write(chunk);
          return;
        }
        cutCount += 1;
        // 'reply': the request goes through and is executed; only its answer (and anything after) is lost.
        if (mode.cut === 'reply') to.write(chunk);
        link.broken = true;
        return;
      }
    }
  };

  const server: Server = createServer((client) => {
    client.on('error', () => undefined);
    if (current.kind === 'reset') {
      client.resetAndDestroy();
      return;
    }
    const upstream = new Socket();
    upstream.on('error', () => undefined);
    const link: Link = { client, upstream, broken: current.kind === 'blackhole', tail: '', up: [], down: [] };
    links.add(link);
    // Upstream is connected even for a blackholed link: the server sees a client that never speaks, as in a partition.
    upstream.connect(targetPort, targetHost);
    // Bytes the client sends before the upstream is connected are buffered by the socket itself.
    client.on('data', (chunk: Buffer) => forward(link, chunk, 'up'));
    upstream.on('data', (chunk: Buffer) => forward(link, chunk, 'down'));
    const end = () => {
      if (!links.has(link)) return;
      // A swallowing link never tells the other side: a partition sends no FIN.
      if (link.broken) {
        if (client.destroyed) destroy(link, false);
        return;
      }
      destroy(link, false);
    };
    client.on('close', end);
    upstream.on('close', end);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;

  return {
    host,
    port,
    url: (scheme = 'redis') => `${scheme}://${host}:${port}`,
    mode: () => current,
    set(mode) {
      const previous = current;
      current = mode;
      if (mode.kind === 'reset') {
        for (const link of [...links]) destroy(link, true);
        return;
      }
      // Leaving a swallowing mode: the links that swallowed bytes are dead (see the module comment).
      if (previous.kind === 'blackhole' || previous.kind === 'cut_on' || mode.kind === 'pass') {
        for (const link of [...links]) if (link.broken) destroy(link, true);
      }
      // Entering blackhole: live links go silent too, not only new ones.
      if (mode.kind === 'blackhole') for (const link of links) link.broken = true;
      if (mode.kind === 'cut_on') cutCount = 0;
    },
    openConnections: () => links.size,
    cuts: () => cutCount,
    retarget(port) {
      targetPort = port;
    },
    async close() {
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      for (const link of [...links]) destroy(link, false);
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
