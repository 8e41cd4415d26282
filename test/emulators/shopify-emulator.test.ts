/**
 * The Shopify emulator against Shopify's published contracts: documents validated by the real 2026-10
 * Admin schema, userErrors where Shopify returns them, cost throttling, 401 on a bad token, signed
 * webhooks, and @shopify/shopify-api's own GraphQL client working through `emulator.fetch`.
 * The schema is loaded once for the file (module cache); each emulator after the first starts in ms.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import '@shopify/shopify-api/adapters/node';
import { ApiVersion, LogSeverity, Session, shopifyApi } from '@shopify/shopify-api';
import { setAbstractFetchFunc } from '@shopify/shopify-api/runtime';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { IMPLEMENTED_ROOT_FIELDS, startShopifyEmulator, type ShopifyEmulator } from '@relais/emulators/shopify';

const SHOP = 'dakar-mode.myshopify.com';
const OTHER_SHOP = 'abidjan-style.myshopify.com';
const randomHex = (bytes = 16) => randomBytes(bytes).toString('hex');
const accessToken = `shpat_${randomHex()}`;
const clientSecret = randomHex(32);
const otherAccessToken = `shpat_${randomHex()}`;

let emulator: ShopifyEmulator;

beforeAll(async () => {
  emulator = await startShopifyEmulator({
    shops: [
      { domain: SHOP, accessToken, clientSecret },
      { domain: OTHER_SHOP, accessToken: otherAccessToken, clientSecret: randomHex(32) },
    ],
  });
  // Reported by the test run: how long the real Admin schema takes to load (once per process).
  console.info(
    `Shopify Admin schema ${emulator.apiVersion} loaded in ${emulator.schemaLoad.totalMs} ms`,
    emulator.schemaLoad,
  );
});

afterAll(async () => {
  await emulator.close();
});

afterEach(() => {
  emulator.faults.clear();
});

interface GraphqlResponse {
  data?: Record<string, unknown> | null;
  errors?: { message: string; locations?: unknown; path?: unknown; extensions?: Record<string, unknown> }[] | string;
  extensions?: {
    cost?: { requestedQueryCost: number; actualQueryCost: number | null; throttleStatus: Record<string, number> };
  };
}

async function graphql(
  query: string,
  variables?: Record<string, unknown>,
  options: { token?: string; domain?: string; target?: ShopifyEmulator; version?: string } = {},
): Promise<{ status: number; body: GraphqlResponse }> {
  const target = options.target ?? emulator;
  const url = `${target.adminUrl(options.domain ?? SHOP)}/admin/api/${options.version ?? target.apiVersion}/graphql.json`;
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-Shopify-Access-Token': options.token ?? accessToken },
    body: JSON.stringify({ query, variables }),
  });
  return { status: response.status, body: (await response.json()) as GraphqlResponse };
}

/** Reads a nested value of a GraphQL answer in tests, where the shape is the query's. */
function at<T = unknown>(value: unknown, ...path: (string | number)[]): T {
  let current: unknown = value;
  for (const key of path) current = (current as Record<string | number, unknown> | undefined)?.[key];
  return current as T;
}

const ORDER_QUERY = /* GraphQL */ `
  query RelaisOrder($id: ID!) {
    order(id: $id) {
      id
      name
      displayFinancialStatus
      displayFulfillmentStatus
      cancelledAt
      tags
      note
      totalOutstandingSet { shopMoney { amount currencyCode } }
      currentTotalPriceSet { shopMoney { amount currencyCode } }
      fulfillmentOrders(first: 5) { nodes { id status lineItems(first: 10) { nodes { id remainingQuantity totalQuantity } } } }
      fulfillments { id status trackingInfo { company number url } events(first: 20) { nodes { status happenedAt } } }
      metafield(namespace: "relais", key: "shipment_id") { value }
    }
  }
`;

const FULFILL = /* GraphQL */ `
  mutation Fulfill($fulfillment: FulfillmentInput!) {
    fulfillmentCreate(fulfillment: $fulfillment) {
      fulfillment { id status trackingInfo { company number url } }
      userErrors { field message }
    }
  }
`;

async function fulfillmentOrderOf(orderGid: string): Promise<string> {
  const { body } = await graphql(ORDER_QUERY, { id: orderGid });
  return at<string>(body.data, 'order', 'fulfillmentOrders', 'nodes', 0, 'id');
}

describe('Admin GraphQL validation against the real 2026-10 schema', () => {
  it('rejects a query asking for a field Order does not have, the way Shopify words it, without running it', async () => {
    const order = emulator.createOrder(SHOP, {}, { webhooks: false });
    const query = `{ order(id: "${order.admin_graphql_api_id}") { id deliveryStatus } }`;
    const { status, body } = await graphql(query);
    expect(status).toBe(200);
    expect(body.data).toBeUndefined();
    expect(body.errors).toEqual([
      {
        message: "Field 'deliveryStatus' doesn't exist on type 'Order'",
        locations: [{ line: 1, column: query.indexOf('deliveryStatus') + 1 }],
        path: ['query', 'order', 'deliveryStatus'],
        extensions: { code: 'undefinedField', typeName: 'Order', fieldName: 'deliveryStatus' },
      },
    ]);
  });

  it('rejects a mutation input field the schema does not define, without running the mutation', async () => {
    const before = emulator.graphqlCalls().length;
    const { body } = await graphql(
      `mutation { fulfillmentCreate(fulfillment: { lineItemsByFulfillmentOrder: [], tracking: { number: "1" } }) { userErrors { message } } }`,
    );
    expect(body.data).toBeUndefined();
    expect(body.errors).toMatchObject([
      { message: expect.stringContaining('"tracking"'), extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } },
    ]);
    expect(emulator.graphqlCalls().slice(before)).toMatchObject([{ outcome: 'invalid', cost: null }]);
  });
  it('refuses a malformed DateTime while coercing variables, before any resolver runs', async () => {
    const { body } = await graphql(
      `mutation Event($event: FulfillmentEventInput!) { fulfillmentEventCreate(fulfillmentEvent: $event) { userErrors { message } } }`,
      { event: { fulfillmentId: 'gid://shopify/Fulfillment/1', status: 'DELIVERED', happenedAt: 'hier soir' } },
    );
    expect(body.data).toBeUndefined();
    expect(body.errors).toMatchObject([{ message: expect.stringContaining('happenedAt') }]);
  });
});

describe('orders', () => {
  it('answers a valid order query with the order as the shop holds it, money as Shopify Decimals', async () => {
    const order = emulator.createOrder(SHOP, {
      lineItems: [{ title: 'Boubou brodé', price: '15000', quantity: 2, grams: 800 }],
      shippingLines: [{ title: 'Livraison Dakar', price: '2000' }],
      tags: ['vip'],
      note: 'Appeler avant de livrer',
    });
    expect(order).toMatchObject({
      financial_status: 'pending',
      total_price: '32000.00',
      total_outstanding: '32000.00',
      currency: 'XOF',
    });
    expect(order.payment_gateway_names).toEqual(['Cash on Delivery (COD)']);

    const { status, body } = await graphql(ORDER_QUERY, { id: order.admin_graphql_api_id });
    expect(status).toBe(200);
    expect(body.errors).toBeUndefined();
    expect(body.data?.['order']).toMatchObject({
      id: order.admin_graphql_api_id,
      name: order.name,
      displayFinancialStatus: 'PENDING',
      displayFulfillmentStatus: 'UNFULFILLED',
      cancelledAt: null,
      tags: ['vip'],
      note: 'Appeler avant de livrer',
      totalOutstandingSet: { shopMoney: { amount: '32000.0', currencyCode: 'XOF' } },
      currentTotalPriceSet: { shopMoney: { amount: '32000.0', currencyCode: 'XOF' } },
      fulfillments: [],
      metafield: null,
    });
    expect(at(body.data, 'order', 'fulfillmentOrders', 'nodes', 0)).toMatchObject({
      status: 'OPEN',
      lineItems: { nodes: [{ remainingQuantity: 2, totalQuantity: 2 }] },
    });
    expect(body.extensions?.cost).toMatchObject({ throttleStatus: { maximumAvailable: 2000, restoreRate: 100 } });
    expect(body.extensions?.cost?.actualQueryCost).toBeLessThanOrEqual(body.extensions?.cost?.requestedQueryCost ?? 0);
  });

  it('shows the shipping as Shopify does after a discount code on it, with tax when prices exclude it, and after a refund of it', async () => {
    const order = emulator.createOrder(SHOP, {
      lineItems: [{ title: 'Boubou brodé', price: '15000' }],
      taxesIncluded: false,
      shippingLines: [
        { title: 'Livraison Dakar', price: '3000', discount: { code: 'MOITIE', amount: '1000' }, taxRate: 0.18 },
      ],
    });
    // Tax on the discounted 2 000: 360. Before discounts and refunds in total_shipping_price_set, after in current_.
    expect(order).toMatchObject({
      taxes_included: false,
      total_price: '17360.00',
      total_outstanding: '17360.00',
      total_discounts: '1000.00',
      total_tax: '360.00',
      discount_codes: [{ code: 'MOITIE', amount: '1000.00', type: 'shipping' }],
      total_shipping_price_set: { shop_money: { amount: '3000.00', currency_code: 'XOF' } },
      current_shipping_price_set: { shop_money: { amount: '2000.00', currency_code: 'XOF' } },
      shipping_lines: [
        {
          price: '3000.00',
          discounted_price: '2000.00',
          current_discounted_price_set: { shop_money: { amount: '2000.00' } },
          tax_lines: [{ price: '360.00', rate: 0.18 }],
          discount_allocations: [{ amount: '1000.00', discount_application_index: 0 }],
        },
      ],
      refunds: [],
    });

    const refunded = emulator.refundShipping(SHOP, order.id, '2000');
    expect(refunded).toMatchObject({
      financial_status: 'pending',
      total_price: '17360.00',
      current_total_price: '15000.00',
      total_outstanding: '15000.00',
      current_shipping_price_set: { shop_money: { amount: '0.00' } },
      refunds: [
        {
          refund_shipping_lines: [
            {
              subtotal_amount_set: { shop_money: { amount: '2000.00' } },
              tax_amount_set: { shop_money: { amount: '360.00' } },
            },
          ],
        },
      ],
    });
    const { body } = await graphql(
      `query ($id: ID!) { order(id: $id) { taxesIncluded currentShippingPriceSet { shopMoney { amount } } totalShippingPriceSet { shopMoney { amount } } shippingLine { taxLines { priceSet { shopMoney { amount } } } } } }`,
      { id: order.admin_graphql_api_id },
    );
    expect(body.errors).toBeUndefined();
    expect(body.data?.['order']).toEqual({
      taxesIncluded: false,
      currentShippingPriceSet: { shopMoney: { amount: '0.0' } },
      totalShippingPriceSet: { shopMoney: { amount: '3000.0' } },
      shippingLine: { taxLines: [{ priceSet: { shopMoney: { amount: '360.0' } } }] },
    });
    expect(() => emulator.refundShipping(SHOP, order.id, '1')).toThrow(/between 0 and 0/);
  });

  it('returns null for an order of another shop, and an error for a malformed id', async () => {
    const elsewhere = emulator.createOrder(OTHER_SHOP, {}, { webhooks: false });
    const { body } = await graphql(ORDER_QUERY, { id: elsewhere.admin_graphql_api_id });
    expect(body.data).toEqual({ order: null });
    const malformed = await graphql(ORDER_QUERY, { id: '12345' });
    expect(malformed.body.errors).toMatchObject([{ message: "Invalid global id '12345'", path: ['order'] }]);
  });

  it('pages through orders updated since a date with pageInfo and cursors, each shop with its own token', async () => {
    const since = new Date(Date.now() - 1000).toISOString();
    const batch = `batch-${randomHex(4)}`;
    const created = [1, 2, 3].map(
      () => emulator.createOrder(OTHER_SHOP, { tags: [batch] }, { webhooks: false }).admin_graphql_api_id,
    );
    const query = /* GraphQL */ `
      query Changed($after: String, $query: String!) {
        orders(first: 2, after: $after, query: $query, sortKey: UPDATED_AT) { nodes { id } pageInfo { hasNextPage endCursor } }
      }
    `;
    const wrongShopToken = await graphql(query, { after: null, query: 'status:any' }, { domain: OTHER_SHOP });
    expect(wrongShopToken.status).toBe(401);

    const pages: string[][] = [];
    let after: string | null = null;
    for (let page = 0; page < 5; page += 1) {
      const { body } = await graphql(
        query,
        { after, query: `updated_at:>='${since}' tag:${batch}` },
        { domain: OTHER_SHOP, token: otherAccessToken },
      );
      expect(body.errors).toBeUndefined();
      pages.push(at<{ id: string }[]>(body.data, 'orders', 'nodes').map((node) => node.id));
      if (!at<boolean>(body.data, 'orders', 'pageInfo', 'hasNextPage')) break;
      after = at<string>(body.data, 'orders', 'pageInfo', 'endCursor');
    }
    expect(pages.map((page) => page.length)).toEqual([2, 1]);
    expect(pages.flat()).toEqual(created);
    const none = await graphql(
      query,
      { after: null, query: 'created_at:>=2099-01-01' },
      { domain: OTHER_SHOP, token: otherAccessToken },
    );
    expect(at(none.body.data, 'orders', 'nodes')).toEqual([]);
  });
});

describe('fulfillment, events and payment write-back', () => {
  it('shows a fulfillment with tracking, its events in order, and the payment in the order snapshot', async () => {
    const order = emulator.createOrder(SHOP, {}, { webhooks: false });
    const fulfillmentOrderId = await fulfillmentOrderOf(order.admin_graphql_api_id);

    const created = await graphql(FULFILL, {
      fulfillment: {
        lineItemsByFulfillmentOrder: [{ fulfillmentOrderId }],
        trackingInfo: { company: 'Relais Express', number: 'SHP_01JD', url: 'https://suivi.relais.example/SHP_01JD' },
        notifyCustomer: true,
      },
    });
    expect(at(created.body.data, 'fulfillmentCreate', 'userErrors')).toEqual([]);
    const fulfillmentId = at<string>(created.body.data, 'fulfillmentCreate', 'fulfillment', 'id');
    expect(fulfillmentId).toMatch(/^gid:\/\/shopify\/Fulfillment\/\d+$/);

    const eventMutation = /* GraphQL */ `
      mutation Event($event: FulfillmentEventInput!) {
        fulfillmentEventCreate(fulfillmentEvent: $event) { fulfillmentEvent { id status happenedAt } userErrors { field message } }
      }
    `;
    const steps = [
      { status: 'CARRIER_PICKED_UP', happenedAt: '2026-11-22T09:00:00Z' },
      { status: 'OUT_FOR_DELIVERY', happenedAt: '2026-11-22T10:30:00Z', message: 'Livreur en route' },
      { status: 'DELIVERED', happenedAt: '2026-11-22T11:05:00Z' },
    ];
    for (const step of steps) {
      const { body } = await graphql(eventMutation, { event: { fulfillmentId, ...step } });
      expect(at(body.data, 'fulfillmentEventCreate', 'userErrors')).toEqual([]);
    }
    const paid = await graphql(
      `mutation Paid($id: ID!) { orderMarkAsPaid(input: { id: $id }) { order { displayFinancialStatus } userErrors { field message } } }`,
      {
        id: order.admin_graphql_api_id,
      },
    );
    expect(at(paid.body.data, 'orderMarkAsPaid')).toEqual({
      order: { displayFinancialStatus: 'PAID' },
      userErrors: [],
    });

    const snapshot = emulator.orderSnapshot(SHOP, order.id);
    expect(snapshot).toMatchObject({
      financialStatus: 'PAID',
      fulfillmentStatus: 'FULFILLED',
      totalOutstanding: '0.00',
      fulfillmentOrders: [{ status: 'CLOSED' }],
      fulfillments: [
        {
          id: fulfillmentId,
          status: 'SUCCESS',
          notifyCustomer: true,
          trackingInfo: [
            { company: 'Relais Express', number: 'SHP_01JD', url: 'https://suivi.relais.example/SHP_01JD' },
          ],
          events: [
            { status: 'CARRIER_PICKED_UP', happenedAt: '2026-11-22T09:00:00Z', message: null },
            { status: 'OUT_FOR_DELIVERY', happenedAt: '2026-11-22T10:30:00Z', message: 'Livreur en route' },
            { status: 'DELIVERED', happenedAt: '2026-11-22T11:05:00Z', message: null },
          ],
        },
      ],
    });
    expect(snapshot.rest).toMatchObject({ financial_status: 'paid', fulfillment_status: 'fulfilled' });
    expect(snapshot.rest.fulfillments[0]).toMatchObject({ shipment_status: 'delivered', tracking_number: 'SHP_01JD' });

    // The same story through GraphQL, as Relais reads it back.
    const { body } = await graphql(ORDER_QUERY, { id: order.admin_graphql_api_id });
    expect(at(body.data, 'order', 'fulfillments', 0, 'events', 'nodes')).toEqual(
      steps.map(({ status, happenedAt }) => ({ status, happenedAt })),
    );
  });

  it('refuses a second fulfillment of the same fulfillment order with userErrors, and creates nothing', async () => {
    const order = emulator.createOrder(SHOP, {}, { webhooks: false });
    const fulfillmentOrderId = await fulfillmentOrderOf(order.admin_graphql_api_id);
    const input = {
      fulfillment: { lineItemsByFulfillmentOrder: [{ fulfillmentOrderId }], trackingInfo: { number: 'SHP_1' } },
    };
    const first = await graphql(FULFILL, input);
    expect(at(first.body.data, 'fulfillmentCreate', 'userErrors')).toEqual([]);
    const second = await graphql(FULFILL, input);
    expect(at(second.body.data, 'fulfillmentCreate', 'fulfillment')).toBeNull();
    expect(at(second.body.data, 'fulfillmentCreate', 'userErrors')).toEqual([
      {
        field: ['fulfillment'],
        message: `Fulfillment order ${fulfillmentOrderId} has an unfulfillable status= closed.`,
      },
    ]);
    expect(second.body.errors).toBeUndefined();
    expect(emulator.orderSnapshot(SHOP, order.id).fulfillments).toHaveLength(1);
  });

  it('answers userErrors for an invalid tracking URL, an unknown fulfillment, a paid or cancelled order', async () => {
    const order = emulator.createOrder(SHOP, {}, { webhooks: false });
    const fulfillmentOrderId = await fulfillmentOrderOf(order.admin_graphql_api_id);
    const badUrl = await graphql(FULFILL, {
      fulfillment: {
        lineItemsByFulfillmentOrder: [{ fulfillmentOrderId }],
        trackingInfo: { number: 'X', url: 'suivi relais' },
      },
    });
    expect(at(badUrl.body.data, 'fulfillmentCreate', 'userErrors', 0, 'field')).toEqual([
      'fulfillment',
      'trackingInfo',
      'url',
    ]);
    expect(emulator.orderSnapshot(SHOP, order.id).fulfillmentOrders[0]?.status).toBe('OPEN');

    const unknownFulfillment = await graphql(
      `mutation { fulfillmentEventCreate(fulfillmentEvent: { fulfillmentId: "gid://shopify/Fulfillment/1", status: DELIVERED }) { fulfillmentEvent { id } userErrors { field message } } }`,
    );
    expect(at(unknownFulfillment.body.data, 'fulfillmentEventCreate', 'userErrors', 0, 'field')).toEqual([
      'fulfillmentEvent',
      'fulfillmentId',
    ]);

    const markPaid = `mutation Paid($id: ID!) { orderMarkAsPaid(input: { id: $id }) { order { id } userErrors { field message } } }`;
    emulator.markPaid(SHOP, order.id);
    const again = await graphql(markPaid, { id: order.admin_graphql_api_id });
    expect(at(again.body.data, 'orderMarkAsPaid', 'userErrors')).toHaveLength(1);

    const cancelled = emulator.createOrder(SHOP, {}, { webhooks: false });
    const cancel = await graphql(
      `mutation Cancel($id: ID!) { orderCancel(orderId: $id, reason: CUSTOMER, refund: false, restock: true) { job { done } orderCancelUserErrors { field message code } } }`,
      { id: cancelled.admin_graphql_api_id },
    );
    expect(at(cancel.body.data, 'orderCancel')).toEqual({ job: { done: true }, orderCancelUserErrors: [] });
    const paidAfterCancel = await graphql(markPaid, { id: cancelled.admin_graphql_api_id });
    expect(at(paidAfterCancel.body.data, 'orderMarkAsPaid', 'userErrors')).toHaveLength(1);
    const fulfilAfterCancel = await graphql(FULFILL, {
      fulfillment: {
        lineItemsByFulfillmentOrder: [
          { fulfillmentOrderId: emulator.orderSnapshot(SHOP, cancelled.id).fulfillmentOrders[0]?.id },
        ],
      },
    });
    expect(at(fulfilAfterCancel.body.data, 'fulfillmentCreate', 'userErrors')).toHaveLength(1);
    expect(emulator.orderSnapshot(SHOP, cancelled.id)).toMatchObject({
      cancelled: true,
      financialStatus: 'VOIDED',
      totalOutstanding: '0.00',
    });

    const unknownOrder = await graphql(markPaid, { id: 'gid://shopify/Order/1' });
    expect(at(unknownOrder.body.data, 'orderMarkAsPaid', 'userErrors')).toEqual([
      { field: ['input', 'id'], message: 'Order does not exist' },
    ]);
  });

  it('adds tags and sets metafields, atomically refusing the whole batch when one metafield is invalid', async () => {
    const order = emulator.createOrder(SHOP, { tags: ['vip'] }, { webhooks: false });
    const tags = await graphql(
      `mutation Tag($id: ID!) { tagsAdd(id: $id, tags: ["relais:ready", "VIP"]) { node { ... on Order { tags } } userErrors { message } } }`,
      {
        id: order.admin_graphql_api_id,
      },
    );
    expect(at(tags.body.data, 'tagsAdd')).toEqual({ node: { tags: ['relais:ready', 'vip'] }, userErrors: [] });

    const set = /* GraphQL */ `
      mutation Set($metafields: [MetafieldsSetInput!]!) {
        metafieldsSet(metafields: $metafields) { metafields { namespace key value } userErrors { field message code elementIndex } }
      }
    `;
    const good = {
      ownerId: order.admin_graphql_api_id,
      namespace: 'relais',
      key: 'shipment_id',
      type: 'single_line_text_field',
      value: 'shp_01JD',
    };
    const refused = await graphql(set, {
      metafields: [good, { ...good, key: 'attempts', type: 'number_integer', value: 'deux' }],
    });
    expect(at(refused.body.data, 'metafieldsSet', 'userErrors')).toEqual([
      {
        field: ['metafields', '1', 'value'],
        message: 'Value must be an integer.',
        code: 'INVALID_VALUE',
        elementIndex: 1,
      },
    ]);
    expect(emulator.orderSnapshot(SHOP, order.id).metafields).toEqual([]);

    const written = await graphql(set, { metafields: [good] });
    expect(at(written.body.data, 'metafieldsSet', 'metafields')).toEqual([
      { namespace: 'relais', key: 'shipment_id', value: 'shp_01JD' },
    ]);
    const { body } = await graphql(ORDER_QUERY, { id: order.admin_graphql_api_id });
    expect(at(body.data, 'order', 'metafield')).toEqual({ value: 'shp_01JD' });
  });
});

describe('REST order reads', () => {
  const rest = (path: string, token = accessToken) =>
    fetch(`${emulator.adminUrl(SHOP)}/admin/api/${emulator.apiVersion}${path}`, {
      headers: { 'X-Shopify-Access-Token': token },
    });

  it('reads one order wrapped in "order", and 404s an unknown one, reporting the REST call limit', async () => {
    const order = emulator.createOrder(SHOP, {}, { webhooks: false });
    const found = await rest(`/orders/${order.id}.json`);
    expect(found.status).toBe(200);
    expect(found.headers.get('x-shopify-shop-api-call-limit')).toMatch(/^\d+\/40$/);
    expect(await found.json()).toEqual({ order: emulator.order(SHOP, order.id) });
    const missing = await rest('/orders/1.json');
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({ errors: 'Not Found' });
    const unauthorized = await rest(`/orders/${order.id}.json`, `shpat_${randomHex()}`);
    expect(unauthorized.status).toBe(401);
    await unauthorized.body?.cancel();
  });

  it('lists orders newest first, following the Link header page by page', async () => {
    const ids = [1, 2, 3].map(() => emulator.createOrder(SHOP, {}, { webhooks: false }).id);
    emulator.cancelOrder(SHOP, ids[0] ?? 0);
    const seen: number[] = [];
    let next: string | null = `/orders.json?status=any&limit=2&fields=id,name&ids=${ids.join(',')}`;
    while (next) {
      const response = await rest(next);
      expect(response.status).toBe(200);
      const body = (await response.json()) as { orders: { id: number; name: string }[] };
      seen.push(...body.orders.map((order) => order.id));
      const link = response.headers.get('link');
      next = link ? new URL(/<([^>]+)>; rel="next"/.exec(link)?.[1] ?? '').search.replace(/^/, '/orders.json') : null;
    }
    expect(seen).toEqual([...ids].reverse());
    const open = (await (await rest(`/orders.json?ids=${ids.join(',')}`)).json()) as { orders: { id: number }[] };
    expect(open.orders.map((order) => order.id)).toEqual([ids[2], ids[1]]);
  });
});

describe('throttling', () => {
  it('answers THROTTLED with the cost figures when the bucket is empty, and serves again once it has refilled', async () => {
    let now = Date.parse('2026-11-22T08:00:00Z');
    const small = await startShopifyEmulator({
      shops: [{ domain: SHOP, accessToken, clientSecret }],
      throttle: { maximumAvailable: 50, restoreRate: 10 },
      clock: () => now,
    });
    try {
      const order = small.createOrder(SHOP, {}, { webhooks: false });
      // 1 (order) + 2 + 10 × (1 + 2 + 10 × 1) = 133 would exceed the bucket; this one costs 1 + 2 + 10 × 1 = 13.
      const query = `query Q($id: ID!) { order(id: $id) { id fulfillmentOrders(first: 10) { nodes { id status } } } }`;
      // Each answer charges 13 and refunds what it did not use (actual cost 4): the bucket drains by 4 a call.
      let throttled: GraphqlResponse | undefined;
      let served = 0;
      while (!throttled && served < 30) {
        const { body } = await graphql(query, { id: order.admin_graphql_api_id }, { target: small });
        if (Array.isArray(body.errors)) throttled = body;
        else served += 1;
      }
      expect(served).toBeGreaterThan(5);
      expect(throttled).toEqual({
        errors: [
          {
            message: 'Throttled',
            extensions: { code: 'THROTTLED', documentation: 'https://shopify.dev/api/usage/rate-limits' },
          },
        ],
        extensions: {
          cost: {
            requestedQueryCost: 13,
            actualQueryCost: null,
            throttleStatus: { maximumAvailable: 50, currentlyAvailable: expect.any(Number), restoreRate: 10 },
          },
        },
      });
      expect(throttled?.extensions?.cost?.throttleStatus['currentlyAvailable']).toBeLessThan(13);
      expect(small.graphqlCalls().filter((call) => call.outcome === 'throttled').length).toBeGreaterThan(0);

      now += 5_000; // 5 s at 10 points per second refills the whole bucket
      const recovered = await graphql(query, { id: order.admin_graphql_api_id }, { target: small });
      expect(recovered.body.errors).toBeUndefined();
      expect(at(recovered.body.data, 'order', 'id')).toBe(order.admin_graphql_api_id);
      expect(recovered.body.extensions?.cost).toMatchObject({ requestedQueryCost: 13, actualQueryCost: 4 });
    } finally {
      await small.close();
    }
  });

  it('plays scripted faults: a forced THROTTLED, then a 503 with Retry-After, then a normal answer', async () => {
    emulator.faults.add({ kind: 'throttle', times: 1, operation: 'shop' });
    emulator.faults.add({ kind: 'status', status: 503, retryAfterSeconds: 1, operation: 'shop' });
    const query = '{ shop { name myshopifyDomain currencyCode } }';
    const throttled = await graphql(query);
    expect(at(throttled.body, 'errors', 0, 'extensions', 'code')).toBe('THROTTLED');
    const unavailable = await fetch(emulator.graphqlUrl(SHOP), {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-Shopify-Access-Token': accessToken },
      body: JSON.stringify({ query }),
    });
    expect(unavailable.status).toBe(503);
    expect(unavailable.headers.get('retry-after')).toBe('1');
    await unavailable.body?.cancel();
    const normal = await graphql(query);
    expect(normal.body.data).toEqual({ shop: { name: 'dakar-mode', myshopifyDomain: SHOP, currencyCode: 'XOF' } });
    expect(emulator.faults.pending()).toEqual([]);
  });
});

describe('authentication and routing', () => {
  it('answers 401 with Shopify body to a wrong access token, and 404 to another API version', async () => {
    const { status, body } = await graphql('{ shop { name } }', undefined, { token: `shpat_${randomHex()}` });
    expect(status).toBe(401);
    expect(body).toEqual({ errors: '[API] Invalid API key or access token (unrecognized login or wrong password)' });
    const otherVersion = await graphql('{ shop { name } }', undefined, { version: '2025-10' });
    expect(otherVersion.status).toBe(404);
  });
});

describe('webhooks', () => {
  let receiver: Receiver;
  beforeAll(async () => {
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await receiver.close();
  });

  it('signs each delivery with the client secret over the raw body, with all of Shopify headers', async () => {
    const created = await graphql(
      `mutation Sub($uri: String!) { webhookSubscriptionCreate(topic: ORDERS_PAID, webhookSubscription: { uri: $uri }) { webhookSubscription { id topic uri } userErrors { field message } } }`,
      { uri: `${receiver.url}/webhooks/shopify` },
    );
    expect(at(created.body.data, 'webhookSubscriptionCreate', 'userErrors')).toEqual([]);
    const listed = await graphql(`{ webhookSubscriptions(first: 10) { nodes { topic uri } } }`);
    expect(at(listed.body.data, 'webhookSubscriptions', 'nodes')).toContainEqual({
      topic: 'ORDERS_PAID',
      uri: `${receiver.url}/webhooks/shopify`,
    });

    const order = emulator.createOrder(SHOP, {}, { webhooks: false });
    emulator.markPaid(SHOP, order.id);
    await emulator.webhooksSettled();

    const delivery = receiver.deliveries.find((d) => d.headers['x-shopify-topic'] === 'orders/paid');
    expect(delivery).toBeDefined();
    if (!delivery) return;
    const expected = createHmac('sha256', clientSecret).update(delivery.rawBody).digest();
    const received = Buffer.from(String(delivery.headers['x-shopify-hmac-sha256']), 'base64');
    expect(received.length).toBe(expected.length);
    expect(timingSafeEqual(received, expected)).toBe(true);
    expect(delivery.headers).toMatchObject({
      'x-shopify-shop-domain': SHOP,
      'x-shopify-api-version': '2026-10',
      'content-type': 'application/json',
    });
    expect(delivery.headers['x-shopify-webhook-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(delivery.headers['x-shopify-event-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(Date.parse(String(delivery.headers['x-shopify-triggered-at']))).not.toBeNaN();
    expect(JSON.parse(delivery.rawBody.toString('utf8'))).toMatchObject({
      id: order.id,
      financial_status: 'paid',
      total_outstanding: '0.00',
    });

    // The library Relais could use to verify agrees with the signature and headers.
    const shopify = shopifyApi({
      apiKey: randomHex(),
      apiSecretKey: clientSecret,
      hostName: 'relais.example',
      apiVersion: ApiVersion.October26,
      isEmbeddedApp: false,
      logger: { level: LogSeverity.Error },
    });
    const check = await shopify.webhooks.validate({
      rawBody: delivery.rawBody.toString('utf8'),
      rawRequest: delivery.request,
      rawResponse: {},
    });
    expect(check).toMatchObject({ valid: true, topic: 'ORDERS_PAID', domain: SHOP });
  });

  it('announces a fulfillment made through GraphQL to subscribers, one event id per topic, after answering', async () => {
    emulator.subscribe(SHOP, 'fulfillments/create', `${receiver.url}/fulfillments`);
    emulator.subscribe(SHOP, 'ORDERS_FULFILLED', `${receiver.url}/fulfilled`, {
      includeFields: ['id', 'fulfillment_status'],
    });
    const order = emulator.createOrder(SHOP, {}, { webhooks: false });
    const fulfillmentOrderId = await fulfillmentOrderOf(order.admin_graphql_api_id);
    const { body } = await graphql(FULFILL, {
      fulfillment: {
        lineItemsByFulfillmentOrder: [{ fulfillmentOrderId }],
        trackingInfo: { company: 'Relais Express', number: 'SHP_77' },
      },
    });
    expect(at(body.data, 'fulfillmentCreate', 'userErrors')).toEqual([]);
    await emulator.webhooksSettled();
    const created = receiver.deliveries.find(
      (d) => d.request.url === '/fulfillments' && JSON.parse(d.rawBody.toString('utf8')).order_id === order.id,
    );
    const fulfilled = receiver.deliveries.find(
      (d) => d.request.url === '/fulfilled' && JSON.parse(d.rawBody.toString('utf8')).id === order.id,
    );
    expect(created?.headers['x-shopify-topic']).toBe('fulfillments/create');
    expect(JSON.parse(created?.rawBody.toString('utf8') ?? '{}')).toMatchObject({
      status: 'success',
      tracking_company: 'Relais Express',
      tracking_number: 'SHP_77',
    });
    expect(fulfilled?.headers['x-shopify-topic']).toBe('orders/fulfilled');
    expect(JSON.parse(fulfilled?.rawBody.toString('utf8') ?? '{}')).toEqual({
      id: order.id,
      fulfillment_status: 'fulfilled',
    });
    expect(created?.headers['x-shopify-event-id']).not.toBe(fulfilled?.headers['x-shopify-event-id']);
  });

  it('replays a delivery with the same event id and a new webhook id, and reports the receiver status', async () => {
    const eventId = '0b7f9a52-6a43-4d6e-9c8e-4b8f2f1f9a01';
    const first = await emulator.deliverWebhook({
      domain: SHOP,
      topic: 'orders/create',
      payload: { id: 1 },
      url: `${receiver.url}/webhooks/shopify`,
      eventId,
    });
    const second = await emulator.deliverWebhook({
      domain: SHOP,
      topic: 'orders/create',
      payload: { id: 1 },
      url: `${receiver.url}/webhooks/shopify`,
      eventId,
    });
    expect(first).toMatchObject({ status: 200, ok: true, eventId });
    expect(second).toMatchObject({ status: 200, ok: true, eventId });
    expect(second.webhookId).not.toBe(first.webhookId);
    const refused = await emulator.deliverWebhook({
      domain: SHOP,
      topic: 'orders/create',
      payload: '{}',
      url: `${receiver.url}/refuse`,
    });
    expect(refused).toMatchObject({ status: 500, ok: false });
  });
});

describe('carrier service and control routes', () => {
  let receiver: Receiver;
  beforeAll(async () => {
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await receiver.close();
  });

  it('sends a signed rate request to the carrier service registered through GraphQL and returns its rates', async () => {
    const created = await graphql(
      `mutation Carrier($input: DeliveryCarrierServiceCreateInput!) { carrierServiceCreate(input: $input) { carrierService { id name active } userErrors { field message } } }`,
      { input: { name: 'Relais', callbackUrl: `${receiver.url}/rates`, active: true, supportsServiceDiscovery: true } },
    );
    expect(at(created.body.data, 'carrierServiceCreate', 'userErrors')).toEqual([]);
    const duplicate = await graphql(
      `mutation { carrierServiceCreate(input: { name: "Relais", callbackUrl: "${receiver.url}/rates", active: true, supportsServiceDiscovery: true }) { carrierService { id } userErrors { field message } } }`,
    );
    expect(at(duplicate.body.data, 'carrierServiceCreate', 'userErrors')).toHaveLength(1);

    const rate = {
      rate: {
        origin: { country: 'SN', city: 'Dakar' },
        destination: { country: 'SN', city: 'Dakar', address1: 'Sicap Liberté 2' },
        items: [],
        currency: 'XOF',
        locale: 'fr',
      },
    };
    const answer = await emulator.requestShippingRates(SHOP, rate);
    expect(answer).toMatchObject({ status: 200, body: { rates: [{ service_code: 'RELAIS', total_price: '250000' }] } });
    const request = receiver.deliveries.find((d) => d.request.url === '/rates');
    expect(request?.headers['x-shopify-shop-domain']).toBe(SHOP);
    expect(request?.headers['x-shopify-hmac-sha256']).toBe(
      createHmac('sha256', clientSecret)
        .update(request?.rawBody ?? '')
        .digest('base64'),
    );
  });

  it('lets a demo create, read and mark orders paid over plain HTTP', async () => {
    const created = await fetch(`${emulator.url}/_emulator/shops/${SHOP}/orders`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ lineItems: [{ title: 'Pagne wax', price: '8000' }], shippingLines: [] }),
    });
    expect(created.status).toBe(201);
    const order = (await created.json()) as { id: number; total_price: string };
    expect(order.total_price).toBe('8000.00');
    const paid = await fetch(`${emulator.url}/_emulator/shops/${SHOP}/orders/${order.id}/mark-paid`, {
      method: 'POST',
    });
    expect(paid.status).toBe(200);
    await paid.body?.cancel();
    const snapshot = (await (await fetch(`${emulator.url}/_emulator/shops/${SHOP}/orders/${order.id}`)).json()) as {
      financialStatus: string;
    };
    expect(snapshot.financialStatus).toBe('PAID');
    const invalid = await fetch(`${emulator.url}/_emulator/shops/${SHOP}/orders`, {
      method: 'POST',
      body: JSON.stringify({ lineItems: [] }),
    });
    expect(invalid.status).toBe(400);
    await invalid.body?.cancel();
  });
});

describe('webhook retries', () => {
  it('retries a failed delivery with the same event id and a new webhook id until the receiver accepts it', async () => {
    const attempts: IncomingHttpHeaders[] = [];
    const flaky = createServer((req, res) => {
      attempts.push(req.headers);
      req.resume();
      req.on('end', () => res.writeHead(attempts.length < 3 ? 503 : 200).end());
    });
    await new Promise<void>((resolve) => flaky.listen(0, '127.0.0.1', resolve));
    const retrying = await startShopifyEmulator({
      shops: [{ domain: SHOP, accessToken, clientSecret }],
      webhooks: { retryDelaysMs: [10, 10, 10] },
    });
    try {
      retrying.subscribe(SHOP, 'orders/create', `http://127.0.0.1:${(flaky.address() as AddressInfo).port}/hook`);
      retrying.createOrder(SHOP);
      await retrying.webhooksSettled();
      expect(attempts).toHaveLength(3);
      expect(new Set(attempts.map((h) => h['x-shopify-event-id'])).size).toBe(1);
      expect(new Set(attempts.map((h) => h['x-shopify-webhook-id'])).size).toBe(3);
      expect(retrying.webhookDeliveries().map((d) => [d.attempt, d.status])).toEqual([
        [1, 503],
        [2, 503],
        [3, 200],
      ]);
    } finally {
      await retrying.close();
      await new Promise<void>((resolve) => {
        flaky.close(() => resolve());
        flaky.closeAllConnections();
      });
    }
  });
});

describe('@shopify/shopify-api through emulator.fetch', () => {
  afterEach(() => {
    // The library's fetch is process-global: give it back so nothing else in this process is redirected.
    setAbstractFetchFunc(globalThis.fetch);
  });

  it('runs the library GraphQL client against the emulator, shop and token as in production', async () => {
    const order = emulator.createOrder(SHOP, {}, { webhooks: false });
    setAbstractFetchFunc(emulator.fetch);
    const shopify = shopifyApi({
      apiKey: randomHex(),
      apiSecretKey: clientSecret,
      hostName: 'relais.example',
      apiVersion: ApiVersion.October26,
      isEmbeddedApp: false,
      logger: { level: LogSeverity.Error },
    });
    const session = new Session({ id: `offline_${SHOP}`, shop: SHOP, state: '', isOnline: false, accessToken });
    const client = new shopify.clients.Graphql({ session });
    const response = await client.request<{ order: { name: string; displayFinancialStatus: string } }>(
      `query Order($id: ID!) { order(id: $id) { name displayFinancialStatus } }`,
      { variables: { id: order.admin_graphql_api_id } },
    );
    expect(response.data?.order).toEqual({ name: order.name, displayFinancialStatus: 'PENDING' });
    expect(response.extensions).toMatchObject({ cost: { throttleStatus: { maximumAvailable: 2000 } } });
    const call = emulator.graphqlCalls().at(-1);
    expect(call).toMatchObject({ domain: SHOP, operationName: 'Order', outcome: 'ok', rootFields: ['order'] });
  });
});

describe('root fields', () => {
  it('serves every root field it lists, each of which exists in the real schema', async () => {
    const { body } = await graphql(`{ __schema { queryType { fields { name } } mutationType { fields { name } } } }`);
    const queryFields = new Set(
      at<{ name: string }[]>(body.data, '__schema', 'queryType', 'fields').map((f) => f.name),
    );
    const mutationFields = new Set(
      at<{ name: string }[]>(body.data, '__schema', 'mutationType', 'fields').map((f) => f.name),
    );
    expect(IMPLEMENTED_ROOT_FIELDS.query.filter((name) => !queryFields.has(name))).toEqual([]);
    expect(IMPLEMENTED_ROOT_FIELDS.mutation.filter((name) => !mutationFields.has(name))).toEqual([]);
  });
});

// ---- a webhook receiver ------------------------------------------------------------------------------

interface Receiver {
  url: string;
  deliveries: {
    headers: IncomingHttpHeaders;
    rawBody: Buffer;
    request: { method: string; url: string; headers: IncomingHttpHeaders };
  }[];
  close(): Promise<void>;
}

async function startReceiver(): Promise<Receiver> {
  const deliveries: Receiver['deliveries'] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      deliveries.push({
        headers: req.headers,
        rawBody: Buffer.concat(chunks),
        request: { method: req.method ?? 'POST', url: req.url ?? '/', headers: req.headers },
      });
      if (req.url === '/rates') {
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end(
          JSON.stringify({
            rates: [
              {
                service_name: 'Relais Dakar',
                service_code: 'RELAIS',
                total_price: '250000',
                currency: 'XOF',
                description: 'Livraison en 24 h',
              },
            ],
          }),
        );
        return;
      }
      res.writeHead(req.url === '/refuse' ? 500 : 200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    deliveries,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
