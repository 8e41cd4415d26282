/**
 * The Admin GraphQL client against the Shopify emulator (real HTTP, documents validated by the real 2026-10
 * schema): throttling, userErrors, 429 and 5xx, what is retried in process and what is handed back to the
 * queue, and the routing fetch that sends only emulated shops to the emulator.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parse, validate } from 'graphql';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Secret } from '../../shops/secret.js';
import { loadAdminSchema, startShopifyEmulator, type ShopifyEmulator } from '@relais/emulators/shopify';
import { Writable } from 'node:stream';
import { createLogger, type Logger } from '../../log.js';
import { ShopifyAdminClient } from './admin.js';
import { ADMIN_DOCUMENTS } from './admin-documents.js';
import { ShopifyWriteError } from './admin-errors.js';
import { throttleWaitMs } from './admin-throttle.js';
import { rejectionOf } from '../../../test/support/rejection.js';

const SHOP = 'dakar-mode.myshopify.com';
const hex = (bytes = 16) => randomBytes(bytes).toString('hex');
const accessToken = `shpat_${hex()}`;
const clientSecret = hex(32);
const logger = createLogger({ level: 'silent' });

let emulator: ShopifyEmulator;

beforeAll(async () => {
  emulator = await startShopifyEmulator({ shops: [{ domain: SHOP, accessToken, clientSecret }] });
});
afterAll(async () => {
  await emulator.close();
});
afterEach(() => {
  emulator.faults.clear();
});

function client(options: { token?: string; maxAttempts?: number; maxWaitMs?: number; logger?: Logger } = {}) {
  const waits: number[] = [];
  const admin = new ShopifyAdminClient({
    domain: SHOP,
    accessToken: new Secret(options.token ?? accessToken, 'test'),
    clientSecret: new Secret(clientSecret, 'test'),
    adminUrl: emulator.adminUrl(SHOP),
    logger: options.logger ?? logger,
    maxAttempts: options.maxAttempts ?? 3,
    maxWaitMs: options.maxWaitMs ?? 5_000,
    // Waits are recorded, not slept: the emulator does not refill on our behalf, and time is not under test.
    sleep: async (ms) => {
      waits.push(ms);
    },
  });
  return { admin, waits };
}

const callsFor = (operationName: string) => emulator.graphqlCalls().filter((c) => c.operationName === operationName);

const failure = (promise: Promise<unknown>) => rejectionOf(promise, ShopifyWriteError);

describe('every document Relais sends is valid against the real Admin schema 2026-10', () => {
  it('validates each document offline with graphql-js', async () => {
    const { schema } = await loadAdminSchema('2026-10');
    for (const [name, query] of Object.entries(ADMIN_DOCUMENTS)) {
      expect(validate(schema, parse(query)).map((e) => `${name}: ${e.message}`)).toEqual([]);
    }
  });

  it('reads an order through the library client, routed to the emulator', async () => {
    const order = emulator.createOrder(SHOP, {}, { webhooks: false });
    const state = await client().admin.orderState(order.admin_graphql_api_id);
    expect(state).toMatchObject({
      id: order.admin_graphql_api_id,
      name: order.name,
      displayFinancialStatus: 'PENDING',
      cancelledAt: null,
    });
    expect(state?.fulfillmentOrders.nodes[0]?.status).toBe('OPEN');
    const [call] = callsFor('RelaisOrderState').slice(-1);
    expect(call).toMatchObject({ outcome: 'ok', domain: SHOP });
  });

  it('answers undefined for an order the shop does not have', async () => {
    expect(await client().admin.orderState('gid://shopify/Order/1')).toBeUndefined();
  });
});

describe('throttling', () => {
  it('waits what the cost figures say: (requested - available) / restoreRate seconds', () => {
    // The figures of a published THROTTLED answer (shared/fixtures/shopify/graphql-throttled-response.json): 4 points short at 50/s.
    expect(
      throttleWaitMs({
        requestedQueryCost: 70,
        throttleStatus: { maximumAvailable: 1000, currentlyAvailable: 66, restoreRate: 50 },
      }),
    ).toBe(100);
    expect(
      throttleWaitMs({
        requestedQueryCost: 752,
        throttleStatus: { maximumAvailable: 1000, currentlyAvailable: 2, restoreRate: 50 },
      }),
    ).toBe(15_000);
  });

  it('a THROTTLED answer is retried and then succeeds', async () => {
    const order = emulator.createOrder(SHOP, {}, { webhooks: false });
    emulator.faults.add({ kind: 'throttle', times: 1 });
    const { admin, waits } = client();
    const state = await admin.orderState(order.admin_graphql_api_id);
    expect(state?.name).toBe(order.name);
    expect(
      callsFor('RelaisOrderState')
        .slice(-2)
        .map((c) => c.outcome),
    ).toEqual(['throttled', 'ok']);
    expect(waits).toHaveLength(1);
  });

  it('a mutation throttled is retried too: Shopify did not execute it', async () => {
    const order = emulator.createOrder(SHOP, {}, { webhooks: false });
    emulator.faults.add({ kind: 'throttle', times: 1, operation: 'tagsAdd' });
    await client().admin.addTags(order.admin_graphql_api_id, ['relais:dispatched']);
    expect(emulator.orderSnapshot(SHOP, order.id).tags).toContain('relais:dispatched');
    expect(
      callsFor('RelaisTagsAdd')
        .slice(-2)
        .map((c) => c.outcome),
    ).toEqual(['throttled', 'ok']);
  });

  it('logs one line per retry series at info, not one per retried call, and never the key "shop" twice', async () => {
    const lines: Record<string, unknown>[] = [];
    const raw: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        raw.push(chunk.toString('utf8'));
        lines.push(JSON.parse(chunk.toString('utf8')) as Record<string, unknown>);
        done();
      },
    });
    const captured = createLogger({ level: 'info', destination: sink }).child({ shop: 'dakar-mode' });
    const order = emulator.createOrder(SHOP, {}, { webhooks: false });
    emulator.faults.add({ kind: 'throttle', times: 3 });
    const { admin, waits } = client({ logger: captured, maxAttempts: 5 });
    expect((await admin.orderState(order.admin_graphql_api_id))?.name).toBe(order.name);
    expect(waits).toHaveLength(3);
    await new Promise((r) => setImmediate(r));
    expect(lines.map((l) => l.msg)).toEqual(['Shopify call succeeded after retries']);
    expect(lines[0]).toMatchObject({ shop: 'dakar-mode', shopDomain: SHOP, operation: 'orderState', attempts: 4 });
    for (const line of raw) expect(line.match(/"shop":/g) ?? []).toHaveLength(1);
  });

  it('throttled on every attempt: a retryable error for the queue, with a delay', async () => {
    emulator.faults.add({ kind: 'throttle', times: 5 });
    const error = await failure(client({ maxAttempts: 3 }).admin.orderState('gid://shopify/Order/1'));
    expect(error.retryable).toBe(true);
    expect(error.retryAfterMs).toBeGreaterThan(0);
    expect(emulator.faults.pending()[0]?.times).toBe(2);
  });
});

describe('HTTP errors', () => {
  it('a 503 is retried in process and then succeeds', async () => {
    const order = emulator.createOrder(SHOP, {}, { webhooks: false });
    emulator.faults.add({ kind: 'status', status: 503, times: 1, retryAfterSeconds: 1 });
    const { admin, waits } = client();
    expect((await admin.orderState(order.admin_graphql_api_id))?.name).toBe(order.name);
    expect(waits).toEqual([1000]);
  });

  it('5xx on every attempt ends in a retryable error with a delay, after the bounded attempts', async () => {
    emulator.faults.add({ kind: 'status', status: 502, times: 10 });
    const orderReads = () => emulator.graphqlCalls().filter((c) => c.rootFields.includes('order')).length;
    const before = orderReads();
    const error = await failure(client({ maxAttempts: 3 }).admin.orderState('gid://shopify/Order/1'));
    expect(error).toMatchObject({ retryable: true, status: 502, operation: 'orderState' });
    expect(error.retryAfterMs).toBeGreaterThan(0);
    expect(orderReads() - before).toBe(3);
  });

  it('a 429 waits its Retry-After', async () => {
    const order = emulator.createOrder(SHOP, {}, { webhooks: false });
    emulator.faults.add({ kind: 'status', status: 429, times: 1, retryAfterSeconds: 2 });
    const { admin, waits } = client();
    await admin.orderState(order.admin_graphql_api_id);
    expect(waits).toEqual([2000]);
  });

  it('a Retry-After longer than the in-process bound is handed to the queue instead of waited', async () => {
    emulator.faults.add({ kind: 'status', status: 429, times: 1, retryAfterSeconds: 60 });
    const { admin, waits } = client({ maxWaitMs: 5_000 });
    const error = await failure(admin.orderState('gid://shopify/Order/1'));
    expect(error).toMatchObject({ retryable: true, retryAfterMs: 60_000 });
    expect(waits).toEqual([]);
  });

  it('a fulfillment event that got a 5xx is not repeated blindly: the job retries and reads first', async () => {
    const order = emulator.createOrder(SHOP, {}, { webhooks: false });
    const { admin } = client();
    const state = await admin.orderState(order.admin_graphql_api_id);
    const fo = state!.fulfillmentOrders.nodes[0]!;
    const fulfillmentId = await admin.createFulfillment({
      lineItemsByFulfillmentOrder: [
        {
          fulfillmentOrderId: fo.id,
          fulfillmentOrderLineItems: fo.lineItems.nodes.map((l) => ({ id: l.id, quantity: l.remainingQuantity })),
        },
      ],
      trackingInfo: { company: 'Relais', number: 'TRK0000001' },
      notifyCustomer: false,
    });
    emulator.faults.add({ kind: 'status', status: 500, times: 1, operation: 'fulfillmentEventCreate' });
    const error = await failure(
      admin.createFulfillmentEvent({ fulfillmentId, status: 'IN_TRANSIT', happenedAt: new Date().toISOString() }),
    );
    expect(error.retryable).toBe(true);
    const eventCalls = emulator
      .graphqlCalls()
      .filter(
        (c) => c.rootFields.includes('fulfillmentEventCreate') && JSON.stringify(c.variables).includes(fulfillmentId),
      );
    expect(eventCalls.map((c) => c.outcome)).toEqual(['fault']);
  });

  it('a wrong access token is a non-retryable 401, and the token is in no message', async () => {
    const wrong = `shpat_${hex()}`;
    const error = await failure(client({ token: wrong }).admin.orderState('gid://shopify/Order/1'));
    expect(error).toMatchObject({ retryable: false, status: 401 });
    expect(JSON.stringify({ message: error.message, stack: error.stack })).not.toContain(wrong);
  });
});

describe('userErrors', () => {
  it("are surfaced as a non-retryable error carrying Shopify's messages", async () => {
    const order = emulator.createOrder(SHOP, {}, { webhooks: false });
    const error = await failure(
      client().admin.setMetafields([
        {
          ownerId: order.admin_graphql_api_id,
          namespace: 'relais',
          key: 'tracking_url',
          type: 'url',
          value: 'not a url',
        },
      ]),
    );
    expect(error.retryable).toBe(false);
    expect(error.userErrors[0]).toMatchObject({ message: 'Value must be a valid URL.' });
    expect(error.message).toContain('Value must be a valid URL.');
    expect(emulator.orderSnapshot(SHOP, order.id).metafields).toEqual([]);
  });

  it('marking a cancelled order paid is refused with userErrors', async () => {
    const order = emulator.createOrder(SHOP, {}, { webhooks: false });
    emulator.cancelOrder(SHOP, order.id);
    const error = await failure(client().admin.markAsPaid(order.admin_graphql_api_id));
    expect(error.userErrors.length).toBeGreaterThan(0);
    expect(error.retryable).toBe(false);
  });
});

describe('routing to the emulator is limited to the clients of shops with an adminUrl', () => {
  let server: Server;
  let seen: string[] = [];
  beforeAll(async () => {
    server = createServer((req, res) => {
      seen.push(`${req.method} ${req.headers.host} ${req.url}`);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  });

  it("building a client for an emulated shop leaves the library's process-wide fetch as it was", async () => {
    seen = [];
    const runtime = await import('@shopify/shopify-api/runtime');
    const before = runtime.abstractFetch;
    client(); // an emulated shop's client, with its own routing fetch
    expect(runtime.abstractFetch).toBe(before);
    const { port } = server.address() as AddressInfo;
    const response = await runtime.abstractFetch(`http://127.0.0.1:${port}/admin/api/2026-10/graphql.json?x=1`, {
      method: 'POST',
      body: '{}',
    });
    expect(await response.json()).toEqual({ ok: true });
    expect(seen).toEqual([`POST 127.0.0.1:${port} /admin/api/2026-10/graphql.json?x=1`]);
  });
});
