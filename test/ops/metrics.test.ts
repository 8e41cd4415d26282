/**
 * /metrics, /healthz and /readyz of the web process and of the worker's own server, after real orders went
 * through: Shopify emulator → Relais web → worker → dispatch emulator (courier, delivery webhooks) → Shopify.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_SHIPPING_ADDRESS, startShopifyEmulator, type ShopifyEmulator } from '@relais/emulators/shopify';
import { NeighbourhoodResolver } from '../../src/geo/resolver.js';
import type { OrderRecord } from '../../src/ledger/order-ledger.js';
import { startWeb } from '../../src/main/web.js';
import { startWorker, type RunningWorker } from '../../src/main/worker.js';
import { shipmentsFor, shopifyExternalId } from '../pipeline/helpers.js';
import {
  makeSecrets,
  randomHex,
  SHOPIFY_DOMAIN,
  SHOPIFY_SHOP_ID,
  startTestRelais,
  waitFor,
  WOO_SHOP_ID,
  type TestRelais,
} from '../support/relais.js';
import { startRedis } from '../support/redis.js';

const ORDER_TOPICS = ['orders/create', 'orders/updated', 'orders/paid', 'orders/cancelled'];
const CUSTOMER = { name: 'Mariama Sow', phone: '+221 78 555 44 33', street: 'Villa 7, Sacré Coeur 3' };

/** The web process's RELAIS_METRICS_TOKEN; the worker's server here is on 127.0.0.1 without one. */
const METRICS_TOKEN = randomHex();

let shopify: ShopifyEmulator;
let relais: TestRelais;
let worker: RunningWorker;

beforeAll(async () => {
  const secrets = makeSecrets();
  shopify = await startShopifyEmulator({
    shops: [
      { domain: SHOPIFY_DOMAIN, accessToken: secrets.shopifyAccessToken, clientSecret: secrets.shopifyClientSecret },
    ],
  });
  relais = await startTestRelais({
    // A private redis-server even when REDIS_URL is set: one test stops it (SIGSTOP) to see /readyz notice.
    // relais.stop() stops it.
    redis: await startRedis({ extraArgs: [] }),
    secrets,
    shopifyAdminUrl: shopify.adminUrl(SHOPIFY_DOMAIN),
    inProcessWorker: false,
    metricsToken: METRICS_TOKEN,
  });
  // The worker as the CLI runs it: its own /metrics, /healthz, /readyz server (any free port here).
  worker = await startWorker({
    ...relais.base,
    resolver: NeighbourhoodResolver.load(),
    concurrency: 4,
    pollIntervalMs: 60_000,
    metricsPort: 0,
  });
  for (const topic of ORDER_TOPICS) shopify.subscribe(SHOPIFY_DOMAIN, topic, `${relais.web.url}/webhooks/shopify`);
  relais.emulator.setOrganisationWebhook(
    'org_relais',
    `${relais.web.url}/webhooks/dispatch/${SHOPIFY_SHOP_ID}/${relais.secrets.dispatchWebhookToken}`,
  );
});

afterAll(async () => {
  await shopify?.webhooksSettled();
  await worker?.close();
  await relais?.stop();
  await shopify?.close();
});

async function record(extId: string): Promise<OrderRecord | undefined> {
  return relais.web.runtime.ledger.get(extId);
}

async function scrape(url: string): Promise<string> {
  const response = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return response.text();
}

/** The value of one sample, e.g. sample(text, 'relais_orders_dispatched_total{shop="dakar-mode"}'). */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

function placeOrder(address: Record<string, unknown>) {
  const order = shopify.createOrder(SHOPIFY_DOMAIN, { shippingAddress: { ...DEFAULT_SHIPPING_ADDRESS, ...address } });
  return shopifyExternalId(order.id);
}

describe('metrics after orders went through', () => {
  let delivered: string;
  let held: string;

  beforeAll(async () => {
    // One call refused once with 429: counted as a dispatch error, then retried at once (Retry-After: 0).
    relais.emulator.faults.add({
      operation: 'createQuote',
      times: 1,
      fault: { kind: 'rate_limit', retryAfterSeconds: 0 },
    });
    delivered = placeOrder({ name: CUSTOMER.name, phone: CUSTOMER.phone, address1: CUSTOMER.street });
    held = placeOrder({ address1: 'Rue 10', latitude: null, longitude: null });
    await waitFor(async () => (await record(delivered))?.state === 'ready' && (await record(held))?.state === 'held', {
      what: 'one order ready, one held',
    });
    await relais.emulator.runUntilIdle();
    await waitFor(async () => (await record(delivered))?.delivery?.step === 'delivered', {
      what: 'the delivery written back',
    });
    // BullMQ reports a job completed just after the ledger moved: wait for the counters, then assert exactly.
    await waitFor(
      async () => {
        const text = await worker.metrics.text();
        return [
          'relais_orders_dispatched_total{shop="dakar-mode"}',
          'relais_orders_held_total{shop="dakar-mode",code="neighbourhood_not_found"}',
          'relais_orders_delivered_total{shop="dakar-mode"}',
          'relais_order_dispatch_seconds_count',
        ].every((series) => sample(text, series) !== undefined && sample(text, series)! > 0);
      },
      { what: 'the worker to count the outcomes' },
    );
  });

  it('the web process counts the orders it received and times its webhook answers', async () => {
    const text = await scrape(relais.web.url);
    expect(sample(text, 'relais_orders_received_total{shop="dakar-mode",platform="shopify"}')).toBeGreaterThanOrEqual(
      2,
    );
    expect(
      sample(text, 'relais_webhook_ack_seconds_count{route="/webhooks/shopify",status="200"}'),
    ).toBeGreaterThanOrEqual(2);
    expect(
      sample(text, 'relais_webhook_ack_seconds_count{route="/webhooks/dispatch/:shopId/:token",status="200"}'),
    ).toBeGreaterThanOrEqual(1);
    expect(text).toMatch(/^process_cpu_user_seconds_total /m);
  });

  it('the worker counts dispatched, held and delivered orders, dispatch call latencies and errors by code', async () => {
    expect(worker.opsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const text = await scrape(worker.opsUrl!);
    expect(sample(text, 'relais_orders_dispatched_total{shop="dakar-mode"}')).toBe(1);
    expect(sample(text, 'relais_orders_held_total{shop="dakar-mode",code="neighbourhood_not_found"}')).toBe(1);
    expect(sample(text, 'relais_orders_delivered_total{shop="dakar-mode"}')).toBe(1);
    expect(sample(text, 'relais_dispatch_call_seconds_count{operation="createShipment",outcome="ok"}')).toBe(1);
    expect(sample(text, 'relais_dispatch_call_seconds_count{operation="markReady",outcome="ok"}')).toBe(1);
    expect(sample(text, 'relais_dispatch_call_seconds_count{operation="createQuote",outcome="error"}')).toBe(1);
    expect(text).toMatch(/^relais_dispatch_errors_total\{operation="createQuote",code="[A-Z_]+"\} 1$/m);
    expect(sample(text, 'relais_order_dispatch_seconds_count')).toBe(1);
    expect(shipmentsFor(relais, delivered)).toHaveLength(1);
  });

  it('queue depths are read from BullMQ at each scrape, per queue and state', async () => {
    const text = await scrape(worker.opsUrl!);
    for (const queue of ['shop-events', 'dispatch', 'deliveries', 'maintenance']) {
      for (const state of ['waiting', 'active', 'delayed', 'failed', 'completed']) {
        expect(sample(text, `relais_queue_jobs{queue="${queue}",state="${state}"}`), `${queue} ${state}`).toBeTypeOf(
          'number',
        );
      }
    }
    // Both webhooks' jobs ran their orders' first attempts; the one refused with 429 was retried by a dispatch job.
    expect(sample(text, 'relais_queue_jobs{queue="shop-events",state="completed"}')).toBeGreaterThanOrEqual(2);
    expect(sample(text, 'relais_queue_jobs{queue="dispatch",state="completed"}')).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'relais_queue_jobs{queue="dispatch",state="active"}')).toBe(0);
    // Counted once: the web process does not report the queues the worker reports.
    expect(await scrape(relais.web.url)).not.toMatch(/^relais_queue_jobs\{/m);
  });

  it('no secret and no personal data in the metrics: labels are shop ids, codes, operations, routes and states', async () => {
    const texts = [await scrape(relais.web.url), await scrape(worker.opsUrl!)].join('\n');
    for (const secret of Object.values(relais.secrets)) expect(texts).not.toContain(secret);
    for (const personal of [CUSTOMER.name, 'Sow', CUSTOMER.phone, '555 44 33', 'Sacré', 'Rue 10', delivered, held])
      expect(texts).not.toContain(personal);
    const allowed = new Set([
      'shop',
      'platform',
      'code',
      'operation',
      'outcome',
      'route',
      'status',
      'queue',
      'state',
      'le',
    ]);
    const series = texts.split('\n').filter((l) => l.startsWith('relais_'));
    expect(series.length).toBeGreaterThan(20);
    for (const line of series) {
      const labels = /\{(.*)\}/.exec(line)?.[1] ?? '';
      for (const [, name, value] of labels.matchAll(/(\w+)="([^"]*)"/g)) {
        expect(allowed.has(name!), `${name} in ${line}`).toBe(true);
        if (name === 'shop') expect([SHOPIFY_SHOP_ID, WOO_SHOP_ID]).toContain(value);
      }
    }
  });
});

describe('access to /metrics', () => {
  it('without RELAIS_METRICS_TOKEN, the web process refuses /metrics (401) and says how to set a token', async () => {
    const web = await startWeb({ ...relais.base, port: 0 });
    try {
      const refused = await fetch(`${web.url}/metrics`);
      expect(refused.status).toBe(401);
      expect(await refused.json()).toMatchObject({
        error: 'metrics_token_required',
        message: expect.stringContaining('RELAIS_METRICS_TOKEN'),
      });
    } finally {
      await web.close();
    }
  });

  it("without RELAIS_METRICS_TOKEN, the worker's server answers /metrics on a loopback address only", async () => {
    const exposed = await startWorker({
      ...relais.base,
      resolver: NeighbourhoodResolver.load(),
      concurrency: 1,
      pollIntervalMs: 60_000,
      metricsPort: 0,
      metricsHost: '0.0.0.0',
    });
    try {
      const port = new URL(exposed.opsUrl!).port;
      expect((await fetch(`http://127.0.0.1:${port}/metrics`)).status).toBe(401);
      expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
    } finally {
      await exposed.close();
    }
    expect((await fetch(`${worker.opsUrl!}/metrics`)).status).toBe(200);
  });

  it('with RELAIS_METRICS_TOKEN set, /metrics answers only a scrape that brings the bearer token', async () => {
    const token = randomHex();
    const web = await startWeb({ ...relais.base, port: 0, metricsToken: token });
    try {
      expect((await fetch(`${web.url}/metrics`)).status).toBe(401);
      expect((await fetch(`${web.url}/metrics`, { headers: { authorization: `Bearer ${randomHex()}` } })).status).toBe(
        401,
      );
      const allowed = await fetch(`${web.url}/metrics`, { headers: { authorization: `Bearer ${token}` } });
      expect(allowed.status).toBe(200);
      expect(await allowed.text()).toContain('relais_orders_received_total');
      // Health stays open: orchestrators probe without credentials.
      expect((await fetch(`${web.url}/readyz`)).status).toBe(200);
    } finally {
      await web.close();
    }
  });
});

describe('health', () => {
  it('/healthz says the process is up and /readyz that Redis, the queues and the database answer (web and worker)', async () => {
    for (const url of [relais.web.url, worker.opsUrl!]) {
      const health = await fetch(`${url}/healthz`);
      expect(health.status).toBe(200);
      expect(await health.json()).toEqual({ status: 'ok' });
    }
    const web = await fetch(`${relais.web.url}/readyz`);
    expect(web.status).toBe(200);
    expect(await web.json()).toEqual({ status: 'ready', redis: 'ok', queues: 'ok', database: 'ok' });
    const ready = await fetch(`${worker.opsUrl!}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: 'ready', redis: 'ok', database: 'ok', workers: 'ok' });
  });

  it('when Redis stops answering, /readyz answers 503 with the reason within a second, /healthz and /metrics still answer', async () => {
    const redis = relais.redis.process!;
    // SIGSTOP: connections stay open and commands go unanswered, the hardest outage to notice.
    redis.kill('SIGSTOP');
    try {
      const started = Date.now();
      const [web, work] = await Promise.all([fetch(`${relais.web.url}/readyz`), fetch(`${worker.opsUrl!}/readyz`)]);
      expect(Date.now() - started).toBeLessThan(3_000);
      expect(web.status).toBe(503);
      expect(await web.json()).toEqual({
        status: 'not_ready',
        redis: 'no answer within 1000 ms',
        queues: 'no answer within 1000 ms',
        database: 'ok',
      });
      expect(work.status).toBe(503);
      expect(await work.json()).toMatchObject({
        status: 'not_ready',
        redis: 'no answer within 1000 ms',
        workers: 'ok',
      });
      expect((await fetch(`${relais.web.url}/healthz`)).status).toBe(200);
      // Stale depths would hide the outage: the queue gauge is left out, the counters stay.
      const text = await scrape(worker.opsUrl!);
      expect(text).not.toMatch(/^relais_queue_jobs\{/m);
      expect(sample(text, 'relais_orders_dispatched_total{shop="dakar-mode"}')).toBe(1);
    } finally {
      redis.kill('SIGCONT');
    }
    await waitFor(async () => (await fetch(`${relais.web.url}/readyz`)).status === 200, {
      what: 'ready again once Redis answers',
    });
  });
});
