/**
 * The fault proxy against a plain TCP echo server: each mode does what the scenarios rely on.
 */
import { createServer, Socket, type AddressInfo, type Server } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startFaultProxy, type FaultProxy } from './support/tcp-proxy.js';

let echo: Server;
let echoPort: number;
/** Everything the echo server received, in order. */
let received = '';
let proxy: FaultProxy;
const sockets: Socket[] = [];

beforeAll(async () => {
  echo = createServer((socket) => {
    socket.on('error', () => undefined);
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString();
      socket.write(chunk);
    });
  });
  await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', () => resolve()));
  echoPort = (echo.address() as AddressInfo).port;
});

afterAll(async () => {
  await new Promise<void>((resolve) => echo.close(() => resolve()));
});

afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  await proxy?.close();
  received = '';
});

interface Client {
  socket: Socket;
  /** Resolves with everything received once `length` characters arrived, or undefined after `timeoutMs`. */
  read(length: number, timeoutMs?: number): Promise<string | undefined>;
  /** Everything received so far. */
  seen(): string;
  closed: Promise<{ error?: string }>;
}

async function connect(): Promise<Client> {
  const socket = new Socket();
  sockets.push(socket);
  let buffer = '';
  let error: string | undefined;
  socket.on('data', (chunk: Buffer) => {
    buffer += chunk.toString();
  });
  socket.on('error', (e: NodeJS.ErrnoException) => {
    error = e.code ?? e.message;
  });
  const closed = new Promise<{ error?: string }>((resolve) =>
    socket.on('close', () => resolve(error ? { error } : {})),
  );
  await new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    socket.connect(proxy.port, proxy.host, () => resolve());
  });
  return {
    socket,
    closed,
    seen: () => buffer,
    async read(length, timeoutMs = 2_000) {
      const deadline = Date.now() + timeoutMs;
      while (buffer.length < length) {
        if (Date.now() > deadline || socket.destroyed) return undefined;
        await new Promise((r) => setTimeout(r, 10));
      }
      return buffer;
    },
  };
}

describe('the TCP fault proxy', () => {
  it('passes bytes both ways untouched', async () => {
    proxy = await startFaultProxy({ targetPort: echoPort });
    const client = await connect();
    client.socket.write('PING');
    expect(await client.read(4)).toBe('PING');
  });

  it('adds latency each way and never reorders a stream, even when latency is switched off mid-flight', async () => {
    proxy = await startFaultProxy({ targetPort: echoPort, mode: { kind: 'latency', ms: 150 } });
    const client = await connect();
    const started = Date.now();
    for (const part of ['a', 'b', 'c']) client.socket.write(part);
    await new Promise((r) => setTimeout(r, 20));
    proxy.set({ kind: 'pass' });
    client.socket.write('d');
    expect(await client.read(4)).toBe('abcd');
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
  });

  it('resets live connections and every new one while in reset mode', async () => {
    proxy = await startFaultProxy({ targetPort: echoPort });
    const live = await connect();
    proxy.set({ kind: 'reset' });
    expect(await live.closed).toEqual({ error: 'ECONNRESET' });
    const fresh = await connect().catch((e: NodeJS.ErrnoException) => e.code ?? e.message);
    const outcome = typeof fresh === 'string' ? fresh : (await fresh.closed).error;
    expect(outcome).toBe('ECONNRESET');
    proxy.set({ kind: 'pass' });
    const after = await connect();
    after.socket.write('ok');
    expect(await after.read(2)).toBe('ok');
  });

  it('blackholes: accepts, never forwards, never answers; back to pass, the silent connections are dropped and new ones work', async () => {
    proxy = await startFaultProxy({ targetPort: echoPort });
    const live = await connect();
    proxy.set({ kind: 'blackhole' });
    const fresh = await connect();
    live.socket.write('lost1');
    fresh.socket.write('lost2');
    expect(await live.read(1, 300)).toBeUndefined();
    expect(await fresh.read(1, 50)).toBeUndefined();
    expect(received).toBe('');
    proxy.set({ kind: 'pass' });
    expect((await live.closed).error).toBe('ECONNRESET');
    expect((await fresh.closed).error).toBe('ECONNRESET');
    const after = await connect();
    after.socket.write('back');
    expect(await after.read(4)).toBe('back');
  });

  it('cuts a connection on a pattern: before the matching request reaches the server, or after, with its answer lost', async () => {
    proxy = await startFaultProxy({
      targetPort: echoPort,
      mode: { kind: 'cut_on', pattern: 'job-42', cut: 'request' },
    });
    const before = await connect();
    before.socket.write('first;');
    expect(await before.read(6)).toBe('first;');
    before.socket.write('add job-42;');
    expect(await before.read(7, 300)).toBeUndefined();
    expect(before.seen()).toBe('first;');
    expect(received).toBe('first;');
    expect(proxy.cuts()).toBe(1);

    proxy.set({ kind: 'cut_on', pattern: 'job-43', cut: 'reply' });
    const after = await connect();
    after.socket.write('add job-43;');
    expect(await after.read(1, 300)).toBeUndefined();
    expect(received).toBe('first;add job-43;');
    expect(proxy.cuts()).toBe(1);
  });
});
