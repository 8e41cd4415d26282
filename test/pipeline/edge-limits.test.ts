/**
 * The web process never lets a client or a hung Redis hold a request open: slow headers and slow bodies
 * are cut at the request timeouts, idle keep-alive sockets are closed, and when Redis stops answering
 * (connected, silent) webhooks are answered 503 with Retry-After within 2 s. Real sockets, real Redis
 * behind a TCP proxy that swallows everything.
 */
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningWeb } from '../../src/main/web.js';
import type { FaultProxy } from '../chaos/support/tcp-proxy.js';
import { shopifyOrderPayload } from '../support/factories.js';
import { startProxiedWeb, type ProxiedWeb } from '../support/proxied-web.js';
import { SHOPIFY_SHOP_ID, type TestRelais } from '../support/relais.js';
import { postShopify } from './helpers.js';

const TIMEOUTS = { requestMs: 1_000, headersMs: 800, keepAliveMs: 500 };

/** Opens a raw socket to the web process and resolves, once it closes, with how long it stayed open and what it received. */
async function openSocket(
  url: string,
  send: string,
): Promise<{ socket: Socket; closed: Promise<{ afterMs: number; received: string }> }> {
  const { hostname, port } = new URL(url);
  const socket = connect(Number(port), hostname);
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  const opened = Date.now();
  let received = '';
  socket.on('data', (d: Buffer) => {
    received += d.toString('utf8');
  });
  socket.on('error', () => undefined);
  const closed = new Promise<{ afterMs: number; received: string }>((resolve) => {
    socket.once('close', () => resolve({ afterMs: Date.now() - opened, received }));
  });
  socket.write(send);
  return { socket, closed };
}

/** Fails the test instead of waiting for the 30 s test timeout when the server never closes the socket. */
async function within<T>(ms: number, promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what}: still open after ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

let relais: TestRelais;
let proxy: FaultProxy;
let slowWeb: RunningWeb;
let stack: ProxiedWeb;

beforeAll(async () => {
  // A web process of its own with short timeouts, reaching Redis through the proxy.
  stack = await startProxiedWeb({ timeouts: TIMEOUTS });
  ({ relais, proxy, web: slowWeb } = stack);
});
afterAll(async () => {
  await stack?.stop();
});

describe('slow clients are cut off at the timeouts', () => {
  it('closes a connection whose body stops arriving within the request timeout (1 s), answering 408', async () => {
    const { closed } = await openSocket(
      slowWeb.url,
      'POST /webhooks/shopify HTTP/1.1\r\nHost: relais\r\nContent-Type: application/json\r\nContent-Length: 5000\r\n\r\n{"id":',
    );
    const { afterMs, received } = await within(5_000, closed, 'slow body');
    expect(afterMs).toBeLessThan(TIMEOUTS.requestMs + 1_500);
    expect(received).toMatch(/^HTTP\/1\.1 408/);
  });

  it('closes a delivery webhook whose body stops arriving within the request timeout, as on the shop routes', async () => {
    const path = `/webhooks/dispatch/${SHOPIFY_SHOP_ID}/${relais.secrets.dispatchWebhookToken}`;
    const { closed } = await openSocket(
      slowWeb.url,
      `POST ${path} HTTP/1.1\r\nHost: relais\r\nContent-Type: application/json\r\nContent-Length: 5000\r\n\r\n{"shipment_id":`,
    );
    const { afterMs, received } = await within(5_000, closed, 'slow delivery webhook body');
    expect(afterMs).toBeLessThan(TIMEOUTS.requestMs + 1_500);
    expect(received).toMatch(/^HTTP\/1\.1 408/);
  });

  it('closes a connection whose headers never finish within the headers timeout', async () => {
    const { closed } = await openSocket(slowWeb.url, 'POST /webhooks/shopify HTTP/1.1\r\nHost: relais\r\nX-Slow: ');
    const { afterMs } = await within(5_000, closed, 'slow headers');
    expect(afterMs).toBeLessThan(TIMEOUTS.headersMs + 1_500);
  });

  it('closes an idle keep-alive connection after the keep-alive timeout', async () => {
    const { closed } = await openSocket(
      slowWeb.url,
      'GET /healthz HTTP/1.1\r\nHost: relais\r\nConnection: keep-alive\r\n\r\n',
    );
    const { afterMs, received } = await within(5_000, closed, 'idle keep-alive');
    expect(received).toMatch(/^HTTP\/1\.1 200/);
    expect(afterMs).toBeLessThan(TIMEOUTS.keepAliveMs + 1_500);
  });
});

describe('a hung Redis (connected, never answering) gets webhooks answered 503 within 2 s', () => {
  it('answers a valid dispatch webhook 503 with Retry-After within 2 s while Redis is silent', async () => {
    proxy.set({ kind: 'blackhole' });
    try {
      const started = Date.now();
      const response = await within(
        10_000,
        fetch(`${slowWeb.url}/webhooks/dispatch/${SHOPIFY_SHOP_ID}/${relais.secrets.dispatchWebhookToken}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ shipment_id: 'shp_hung_redis_1', status: 'PICKED_UP' }),
        }),
        'dispatch webhook',
      );
      expect(Date.now() - started).toBeLessThan(2_000);
      expect(response.status).toBe(503);
      expect(response.headers.get('retry-after')).toMatch(/^\d+$/);
    } finally {
      proxy.set({ kind: 'pass' });
    }
  });

  it('answers a signed Shopify order webhook 503 with Retry-After within 2 s while Redis is silent', async () => {
    proxy.set({ kind: 'blackhole' });
    try {
      const started = Date.now();
      const answer = await within(
        10_000,
        postShopify({ ...relais, web: slowWeb }, 'orders/create', shopifyOrderPayload()),
        'shopify webhook',
      );
      expect(Date.now() - started).toBeLessThan(2_000);
      expect(answer.status).toBe(503);
    } finally {
      proxy.set({ kind: 'pass' });
    }
  });
});
