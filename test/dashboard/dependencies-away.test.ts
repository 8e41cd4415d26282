/**
 * The dashboard when what it reads goes away: it answers 503 with a message saying so, at once when the Redis
 * connection is down and within its bound when the ledger's PostgreSQL is connected but silent, instead of leaving
 * the page loading forever; and a page of the ledger still answers while Redis is silent (orders are not in Redis),
 * wrong tokens still slowed by the process's own count.
 * A real redis-server and a real PostgreSQL behind TCP fault proxies that swallow everything or reset every connection.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningWeb } from '../../src/main/web.js';
import type { FaultProxy } from '../chaos/support/tcp-proxy.js';
import { startProxiedWeb, type ProxiedWeb } from '../support/proxied-web.js';
import { randomHex, waitFor } from '../support/relais.js';

const TOKEN = `dash_${randomHex(16)}`;
const ANSWER_WITHIN_MS = 1_500;

let proxy: FaultProxy;
let dbProxy: FaultProxy;
let web: RunningWeb;
let stack: ProxiedWeb;

beforeAll(async () => {
  stack = await startProxiedWeb({ dashboardToken: TOKEN, dashboard: { answerWithinMs: ANSWER_WITHIN_MS } });
  ({ proxy, dbProxy, web } = stack);
});
afterAll(async () => {
  await stack?.stop();
});

const page = (path: string) =>
  fetch(`${web.url}${path}`, { headers: { authorization: `Bearer ${TOKEN}` }, redirect: 'manual' });

describe('the dashboard when Redis or the database goes away', () => {
  it('answers a page while Redis answers', async () => {
    expect((await page('/dashboard/held')).status).toBe(200);
  });

  it('answers 503 with Retry-After and a message within its bound while the database is connected but silent', async () => {
    dbProxy.set({ kind: 'blackhole' });
    try {
      const started = Date.now();
      const response = await page('/dashboard/held');
      expect(Date.now() - started).toBeLessThan(ANSWER_WITHIN_MS + 1_000);
      expect(response.status).toBe(503);
      expect(response.headers.get('retry-after')).toBe('10');
      expect(await response.text()).toMatch(
        /could not answer within 2 s: the database, Redis or a service it asked is not answering/,
      );
    } finally {
      dbProxy.set({ kind: 'pass' });
    }
    await waitFor(async () => (await page('/dashboard/held')).status === 200, {
      what: 'the dashboard to answer again',
    });
  });

  it('still shows the held orders from the ledger while Redis is connected but silent', async () => {
    proxy.set({ kind: 'blackhole' });
    try {
      const response = await page('/dashboard/held');
      expect(response.status).toBe(200);
    } finally {
      proxy.set({ kind: 'pass' });
    }
  });

  it('still slows a guesser while Redis is connected but silent: the process counts wrong tokens on its own', async () => {
    const bearer = (token: string) =>
      fetch(`${web.url}/dashboard/held`, { headers: { authorization: `Bearer ${token}` }, redirect: 'manual' });
    // The connections the last test's partition broke are replaced first: a PING answered on the new one.
    await waitFor(async () => (await web.runtime.redis.ping()) === 'PONG', { what: 'Redis reconnected' });
    proxy.set({ kind: 'blackhole' });
    let right: Response;
    try {
      const wrong = await bearer('wrong-guess-while-redis-is-silent');
      expect(wrong.status).toBe(401);
      expect(await wrong.text()).toBe('wrong dashboard token: wait 1 second before trying again\n');
      // Within the second, the right token waits too: no guess is answered differently while Redis is away.
      right = await bearer(TOKEN);
      expect(right.status).toBe(429);
    } finally {
      proxy.set({ kind: 'pass' });
    }
    await new Promise((r) => setTimeout(r, Number(right.headers.get('retry-after')) * 1000));
    await waitFor(async () => (await bearer(TOKEN)).status === 200, { what: 'the right token let in after the wait' });
  });

  it('answers 503 at once, saying Redis cannot be reached, while every connection to Redis is refused', async () => {
    proxy.set({ kind: 'reset' });
    await waitFor(async () => web.runtime.redis.status !== 'ready', { what: 'the connection to notice' });
    const started = Date.now();
    const response = await page('/dashboard/orders');
    expect(Date.now() - started).toBeLessThan(500);
    expect(response.status).toBe(503);
    expect(await response.text()).toContain('Relais cannot reach Redis right now');
    proxy.set({ kind: 'pass' });
    await waitFor(async () => (await page('/dashboard/held')).status === 200, {
      what: 'the dashboard to answer again',
    });
  });
});
