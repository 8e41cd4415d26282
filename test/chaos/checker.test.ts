/**
 * The checker itself: fed hand-made histories with a known fault, it must name the order and the fault,
 * and stay silent on a clean history (a checker that cannot fail proves nothing).
 */
import { describe, expect, it } from 'vitest';
import type { EmulatedShipmentSnapshot, RecordedCall } from '@relais/emulators/dispatch';
import type { GraphqlCallRecord, OrderSnapshot as ShopifyOrderSnapshot, RestOrder } from '@relais/emulators/shopify';
import type { ApiCall, OrderSnapshot as WooOrderSnapshot } from '@relais/emulators/woocommerce';
import { checkHistory, describeReport } from './support/checker.js';
import { emptyHistory, type History, type LedgerFinal, type PlacedOrder, type SentWebhook } from './support/history.js';

const SHOPIFY_ORDER: PlacedOrder = {
  externalOrderId: 'dakar-mode:1001',
  platform: 'shopify',
  shopOrderId: 1001,
  cashOnDelivery: true,
  owed: { outstanding: '17000.00', shipping: '2000.00' },
};
const WOO_ORDER: PlacedOrder = {
  externalOrderId: 'abidjan-tech:55',
  platform: 'woocommerce',
  shopOrderId: 55,
  cashOnDelivery: true,
  owed: { outstanding: '16500', shipping: '1500' },
};
const DELIVERED_PATH = ['CREATED', 'READY', 'ASSIGNED', 'PICKED_UP', 'IN_TRANSIT', 'OUT_FOR_DELIVERY', 'DELIVERED'];

function shipment(externalOrderId: string, id: string, path: string[]): EmulatedShipmentSnapshot {
  const at = '2026-03-01T10:00:00.000Z';
  return {
    orgId: 'org_relais',
    shipment_id: id,
    external_order_id: externalOrderId,
    quote_id: `qte_${id}`,
    status: path.at(-1)!,
    tracking_code: `TRK${id}`,
    publicTrackingUrl: `http://127.0.0.1:1/t/TRK${id}`,
    orderAmountXof: 15000,
    payment_mode: 'cash_on_delivery',
    total: 2500,
    settlement_status: 'PENDING',
    created_at: at,
    updated_at: at,
    status_history: path.map((status) => ({ status, at })),
    claims: [],
  };
}

function webhook(order: PlacedOrder, status: number, seq = 1): SentWebhook {
  return {
    seq,
    at: seq * 10,
    from: order.platform,
    topic: order.platform === 'shopify' ? 'orders/create' : 'order.created',
    externalOrderId: order.externalOrderId,
    deliveryKey: `k${seq}`,
    attempt: 1,
    status,
  };
}

function ledger(order: PlacedOrder, state: string, step?: string, extra: Partial<LedgerFinal> = {}): LedgerFinal {
  return {
    externalOrderId: order.externalOrderId,
    state,
    timeline: [],
    ...(step
      ? {
          delivery: {
            step: step as NonNullable<LedgerFinal['delivery']>['step'],
            serviceStatus: step.toUpperCase(),
            updatedAt: '',
            written: { steps: {} },
          },
        }
      : {}),
    ...extra,
  };
}

function shopifyPage(overrides: Partial<ShopifyOrderSnapshot> = {}): ShopifyOrderSnapshot {
  return {
    id: 1001,
    gid: 'gid://shopify/Order/1001',
    name: '#1001',
    financialStatus: 'PAID',
    fulfillmentStatus: 'FULFILLED',
    cancelled: false,
    cancelledAt: null,
    cancelReason: null,
    currency: 'XOF',
    totalPrice: '15000.00',
    currentTotalPrice: '15000.00',
    totalOutstanding: '0.00',
    gatewayNames: ['Cash on Delivery (COD)'],
    tags: ['relais:dispatched', 'relais:cod'],
    note: null,
    metafields: [{ namespace: 'relais', key: 'shipment_id', type: 'single_line_text_field', value: 'shp_A' }],
    fulfillmentOrders: [],
    fulfillments: [
      {
        id: 'gid://shopify/Fulfillment/1',
        name: '#1001-F1',
        status: 'SUCCESS',
        notifyCustomer: true,
        lineItems: [],
        trackingInfo: [{ company: 'Relais', number: 'TRKshp_A', url: 'http://127.0.0.1:1/t/TRKshp_A' }],
        events: ['CARRIER_PICKED_UP', 'IN_TRANSIT', 'OUT_FOR_DELIVERY', 'DELIVERED'].map((status) => ({
          status,
          happenedAt: '',
          message: null,
        })),
      },
    ],
    updatedAt: '',
    rest: {} as RestOrder,
    ...overrides,
  };
}

function wooNote(id: number, note: string, customer = false) {
  return { id, note, customer_note: customer, author: 'Relais', date_created_gmt: '' };
}

function wooPage(overrides: Partial<WooOrderSnapshot> = {}): WooOrderSnapshot {
  return {
    id: 55,
    status: 'completed',
    total: '14000.00',
    payment_method: 'cod',
    transaction_id: '',
    date_paid: '2026-03-01T11:00:00',
    date_completed: '2026-03-01T11:00:00',
    date_modified: '',
    set_paid: true,
    meta_data: [
      { id: 1, key: '_relais_shipment_id', value: 'shp_B' },
      { id: 2, key: '_relais_tracking_code', value: 'TRKshp_B' },
    ],
    notes: [
      wooNote(1, 'Your order #55 is on its way with Relais. Tracking code: TRKshp_B.', true),
      wooNote(2, 'Relais: picked up by the courier (shipment shp_B).'),
      wooNote(3, 'Relais: in transit (shipment shp_B).'),
      wooNote(4, 'Relais: out for delivery (shipment shp_B).'),
      wooNote(5, 'Relais: delivered (shipment shp_B).'),
      wooNote(6, 'Relais: cash collected: 14000 XOF (shipment shp_B).'),
    ],
    ...overrides,
  };
}

function markAsPaidCall(orderId: number): GraphqlCallRecord {
  return {
    at: '',
    kind: 'graphql',
    request: 'POST /admin/api/2026-10/graphql.json',
    domain: 'dakar-mode.myshopify.com',
    apiVersion: '2026-10',
    httpStatus: 200,
    outcome: 'ok',
    operationType: 'mutation',
    operationName: 'RelaisOrderMarkAsPaid',
    rootFields: ['orderMarkAsPaid'],
    query: null,
    variables: { input: { id: `gid://shopify/Order/${orderId}` } },
    cost: null,
    response: { data: { orderMarkAsPaid: { userErrors: [] } } },
  };
}

function wooPaidCall(orderId: number): ApiCall {
  return {
    shopId: 'abidjan-tech',
    method: 'PUT',
    route: `/wc/v3/orders/${orderId}`,
    query: {},
    body: { status: 'completed', set_paid: true },
    status: 200,
    auth: 'basic',
    at: new Date(),
  };
}

/** Two orders that went right: each acknowledged, one shipment delivered, written once, paid once. */
function cleanHistory(): History {
  const history = emptyHistory();
  history.orders = [SHOPIFY_ORDER, WOO_ORDER];
  history.webhooks = [webhook(SHOPIFY_ORDER, 200, 1), webhook(WOO_ORDER, 200, 2)];
  history.dispatch.shipments = [
    shipment(SHOPIFY_ORDER.externalOrderId, 'shp_A', DELIVERED_PATH),
    shipment(WOO_ORDER.externalOrderId, 'shp_B', DELIVERED_PATH),
  ];
  history.dispatch.calls = [] as RecordedCall[];
  history.shopify = { calls: [markAsPaidCall(1001)], orders: [shopifyPage()] };
  history.woo = { calls: [wooPaidCall(55)], orders: [wooPage()] };
  history.ledger = [ledger(SHOPIFY_ORDER, 'delivered', 'delivered'), ledger(WOO_ORDER, 'delivered', 'delivered')];
  history.samples.ledger = [
    { at: 1, externalOrderId: SHOPIFY_ORDER.externalOrderId, state: 'dispatching' },
    { at: 2, externalOrderId: SHOPIFY_ORDER.externalOrderId, state: 'ready', step: 'ready' },
    { at: 3, externalOrderId: SHOPIFY_ORDER.externalOrderId, state: 'in_delivery', step: 'in_transit' },
    { at: 4, externalOrderId: SHOPIFY_ORDER.externalOrderId, state: 'delivered', step: 'delivered' },
  ];
  history.samples.shop = [
    { at: 1, externalOrderId: SHOPIFY_ORDER.externalOrderId, financial: 'PENDING', fulfillment: 'UNFULFILLED' },
    { at: 2, externalOrderId: SHOPIFY_ORDER.externalOrderId, financial: 'PAID', fulfillment: 'FULFILLED' },
    { at: 1, externalOrderId: WOO_ORDER.externalOrderId, status: 'processing' },
    { at: 2, externalOrderId: WOO_ORDER.externalOrderId, status: 'completed' },
  ];
  return history;
}

const ids = (anomalies: { externalOrderId: string }[]) => anomalies.map((a) => a.externalOrderId);

describe('the history checker', () => {
  it('finds nothing wrong with orders that were each shipped once, written once and paid once', () => {
    const report = checkHistory(cleanHistory());
    expect(describeReport(report)).toContain('2 orders, 2 acknowledged, 2 shipped');
    expect([report.lost, report.duplicated, report.regressed, report.stale, report.misbilled]).toEqual([
      [],
      [],
      [],
      [],
      [],
    ]);
  });

  it("reports as MISBILLED a COD shipment carrying the shop's whole balance instead of the goods (balance less the shop's shipping), in whole francs", () => {
    const history = cleanHistory();
    history.dispatch.shipments = history.dispatch.shipments.map((s) =>
      s.external_order_id === SHOPIFY_ORDER.externalOrderId ? { ...s, orderAmountXof: 17_000 } : s,
    );
    const report = checkHistory(history);
    expect(ids(report.misbilled)).toEqual([SHOPIFY_ORDER.externalOrderId]);
    expect(report.misbilled[0]!.detail).toContain(
      'the shop owes 15000 XOF for the goods (outstanding 17000.00 less shipping 2000.00)',
    );
  });

  it('reports a second shipment for one order as DUPLICATED and an acknowledged order without a shipment as LOST', () => {
    const history = cleanHistory();
    history.dispatch.shipments = [
      shipment(SHOPIFY_ORDER.externalOrderId, 'shp_A', DELIVERED_PATH),
      shipment(SHOPIFY_ORDER.externalOrderId, 'shp_A2', ['CREATED', 'READY']),
    ];
    history.ledger = [ledger(SHOPIFY_ORDER, 'delivered', 'delivered'), ledger(WOO_ORDER, 'received')];
    history.woo.orders = [
      wooPage({ notes: [], meta_data: [], status: 'processing', set_paid: false, date_paid: null }),
    ];
    history.woo.calls = [];

    const report = checkHistory(history);
    expect(ids(report.duplicated)).toEqual([SHOPIFY_ORDER.externalOrderId]);
    expect(report.duplicated[0]!.detail).toMatch(/2 shipments for one order: shp_A \(DELIVERED\), shp_A2 \(READY\)/);
    expect(ids(report.lost)).toEqual([WOO_ORDER.externalOrderId]);
    expect(report.lost[0]!.detail).toMatch(/no shipment was ever created \(ledger state received\)/);
    expect(report.shipped).toBe(0);
  });

  it('reports an order whose only shipment was never marked ready as LOST, unless the ledger holds it with a reason', () => {
    const history = cleanHistory();
    history.dispatch.shipments = [
      shipment(SHOPIFY_ORDER.externalOrderId, 'shp_A', DELIVERED_PATH),
      shipment(WOO_ORDER.externalOrderId, 'shp_B', ['CREATED']),
    ];
    history.ledger = [ledger(SHOPIFY_ORDER, 'delivered', 'delivered'), ledger(WOO_ORDER, 'dispatching')];
    expect(checkHistory(history).lost.map((a) => a.detail)).toEqual([
      expect.stringMatching(/shp_B was never marked ready/),
    ]);

    history.ledger[1] = ledger(WOO_ORDER, 'held', undefined, {
      hold: { code: 'dispatch_unavailable', message: 'the delivery service could not be reached', at: '' },
    });
    const held = checkHistory(history);
    expect(held.lost).toEqual([]);
    expect(held.held).toEqual([{ externalOrderId: WOO_ORDER.externalOrderId, code: 'dispatch_unavailable' }]);

    history.ledger[1] = ledger(WOO_ORDER, 'held', undefined, { hold: { code: 'x', message: ' ', at: '' } });
    expect(checkHistory(history).lost.map((a) => a.detail)).toEqual(['held without a visible reason']);
  });

  it('does not count an order the platform was never told about (only 503s) as lost, but lists it as unacknowledged', () => {
    const history = cleanHistory();
    history.webhooks = [
      webhook(SHOPIFY_ORDER, 200, 1),
      webhook(WOO_ORDER, 503, 2),
      { ...webhook(WOO_ORDER, 0, 3), error: 'socket hang up' },
    ];
    history.dispatch.shipments = [shipment(SHOPIFY_ORDER.externalOrderId, 'shp_A', DELIVERED_PATH)];
    history.ledger = [
      ledger(SHOPIFY_ORDER, 'delivered', 'delivered'),
      { externalOrderId: WOO_ORDER.externalOrderId, timeline: [] },
    ];
    history.woo.orders = [];
    const report = checkHistory(history);
    expect(report.lost).toEqual([]);
    expect(report.unacknowledged).toEqual([WOO_ORDER.externalOrderId]);
  });

  it('reports a fulfillment event, a note or a payment written twice in the shop as DUPLICATED', () => {
    const history = cleanHistory();
    const page = shopifyPage();
    page.fulfillments[0]!.events.push({ status: 'DELIVERED', happenedAt: '', message: null });
    history.shopify = { calls: [markAsPaidCall(1001), markAsPaidCall(1001)], orders: [page] };
    history.woo.orders = [wooPage({ notes: [...wooPage().notes, wooNote(7, 'Relais: delivered (shipment shp_B).')] })];

    const report = checkHistory(history);
    expect(report.duplicated.map((a) => [a.externalOrderId, a.detail])).toEqual([
      [SHOPIFY_ORDER.externalOrderId, expect.stringMatching(/event\(s\) DELIVERED written twice/)],
      [SHOPIFY_ORDER.externalOrderId, expect.stringMatching(/orderMarkAsPaid applied 2 times/)],
      [WOO_ORDER.externalOrderId, expect.stringMatching(/note written twice .*delivered \(shipment shp_B\)/)],
    ]);
  });

  it('reports a delivery step or a shop status that moved backwards, and a returned order marked paid, as REGRESSED', () => {
    const history = cleanHistory();
    history.samples.ledger.push({
      at: 5,
      externalOrderId: SHOPIFY_ORDER.externalOrderId,
      state: 'in_delivery',
      step: 'in_transit',
    });
    history.samples.shop.push({ at: 3, externalOrderId: WOO_ORDER.externalOrderId, status: 'processing' });
    const returned = [
      'CREATED',
      'READY',
      'ASSIGNED',
      'PICKED_UP',
      'IN_TRANSIT',
      'OUT_FOR_DELIVERY',
      'DELIVERY_FAILED',
      'RETURNED',
    ];
    history.dispatch.shipments[1] = shipment(WOO_ORDER.externalOrderId, 'shp_B', returned);
    history.ledger[1] = ledger(WOO_ORDER, 'returned', 'returned');
    history.woo.orders = [
      wooPage({
        notes: [
          wooNote(1, 'Relais: picked up by the courier (shipment shp_B).'),
          wooNote(2, 'Relais: returned to the merchant (shipment shp_B).'),
          wooNote(3, 'Relais: out for delivery (shipment shp_B).'),
        ],
      }),
    ];

    const report = checkHistory(history);
    expect(report.regressed.map((a) => [a.externalOrderId, a.detail])).toEqual([
      [SHOPIFY_ORDER.externalOrderId, expect.stringMatching(/delivery step went from delivered .* back to in_transit/)],
      [WOO_ORDER.externalOrderId, expect.stringMatching(/step note OUT_FOR_DELIVERY written after RETURNED/)],
      [WOO_ORDER.externalOrderId, expect.stringMatching(/ended RETURNED yet WooCommerce order 55 was marked paid/)],
      [WOO_ORDER.externalOrderId, expect.stringMatching(/status went from completed .* back to processing/)],
    ]);
  });

  it('reports an order whose ledger state left delivered for cancel_refused, or returned for cancelled, as REGRESSED', () => {
    const history = cleanHistory();
    history.samples.ledger.push({
      at: 5,
      externalOrderId: SHOPIFY_ORDER.externalOrderId,
      state: 'cancel_refused',
      step: 'delivered',
    });
    history.samples.ledger.push(
      { at: 1, externalOrderId: WOO_ORDER.externalOrderId, state: 'returned', step: 'delivered' },
      { at: 2, externalOrderId: WOO_ORDER.externalOrderId, state: 'cancelled', step: 'delivered' },
    );

    const report = checkHistory(history);
    expect(report.regressed.map((a) => [a.externalOrderId, a.detail])).toEqual([
      [SHOPIFY_ORDER.externalOrderId, expect.stringMatching(/state went from delivered .* back to cancel_refused/)],
      [WOO_ORDER.externalOrderId, expect.stringMatching(/state went from returned .* back to cancelled/)],
    ]);
  });

  it("reports a shop or ledger left behind the shipment's final state as STALE", () => {
    const history = cleanHistory();
    history.ledger[0] = ledger(SHOPIFY_ORDER, 'in_delivery', 'out_for_delivery');
    history.shopify.orders = [shopifyPage({ financialStatus: 'PENDING' })];
    history.shopify.calls = [];
    const report = checkHistory(history);
    expect(report.stale.map((a) => a.detail)).toEqual([
      expect.stringMatching(/delivered \(cash collected\) but #1001 is PENDING/),
      expect.stringMatching(/shipment is DELIVERED but the ledger's delivery step is out_for_delivery/),
    ]);
    expect(report.lost).toEqual([]);
  });

  it('reports a WooCommerce order the shop shows to ship again (failed, then paid) that the ledger ended cancelled as LOST, not one the shop still shows failed', () => {
    const history = cleanHistory();
    history.dispatch.shipments = [shipment(SHOPIFY_ORDER.externalOrderId, 'shp_A', DELIVERED_PATH)];
    history.ledger[1] = ledger(WOO_ORDER, 'cancelled');
    history.woo = { calls: [], orders: [wooPage({ status: 'processing', notes: [], meta_data: [], set_paid: false })] };
    const restored = checkHistory(history);
    expect(restored.lost.map((a) => [a.externalOrderId, a.detail])).toEqual([
      [WOO_ORDER.externalOrderId, expect.stringMatching(/ledger state cancelled\); the shop shows it as one to ship/)],
    ]);

    history.woo.orders = [wooPage({ status: 'failed', notes: [], meta_data: [], set_paid: false })];
    expect(checkHistory(history).lost).toEqual([]);
    history.ledger[1] = ledger(WOO_ORDER, 'held', undefined, {
      hold: { code: 'shop_payment_failed', message: 'its payment failed', at: '' },
    });
    expect(checkHistory(history).lost).toEqual([]);
  });

  it('reports a held order whose shipment was marked ready, and one that left held for a delivery state with no shop event or replay, as REGRESSED', () => {
    const history = cleanHistory();
    history.dispatch.shipments = [
      shipment(SHOPIFY_ORDER.externalOrderId, 'shp_A', DELIVERED_PATH),
      shipment(WOO_ORDER.externalOrderId, 'shp_B', ['CREATED', 'READY']),
    ];
    history.ledger[1] = ledger(WOO_ORDER, 'held', undefined, {
      hold: { code: 'cod_amount_mismatch', message: 'carries 5000 XOF, owes 15000', at: '' },
      shipmentId: 'shp_B',
    });
    expect(checkHistory(history).regressed.map((a) => a.detail)).toEqual([
      expect.stringMatching(/held \(cod_amount_mismatch\).*shp_B was marked ready: a hold was bypassed/),
    ]);

    // Held at 20 ms, awaiting_ready at 30 ms after a poll: no shop event since the order was last seen at 10 ms.
    history.dispatch.shipments[1] = shipment(WOO_ORDER.externalOrderId, 'shp_B', ['CREATED']);
    history.ledger[1] = ledger(WOO_ORDER, 'awaiting_ready', 'created', { shipmentId: 'shp_B' });
    history.webhooks = [webhook(SHOPIFY_ORDER, 200, 1)];
    history.samples.ledger.push(
      { at: 10, externalOrderId: WOO_ORDER.externalOrderId, state: 'received' },
      { at: 20, externalOrderId: WOO_ORDER.externalOrderId, state: 'held' },
      { at: 30, externalOrderId: WOO_ORDER.externalOrderId, state: 'awaiting_ready', step: 'created' },
    );
    expect(checkHistory(history).regressed.map((a) => a.detail)).toEqual([
      expect.stringMatching(/left held for awaiting_ready \(at 30 ms\) with no shop event or replay/),
    ]);
    // A shop event about the order after the hold (the merchant fixed it): leaving held is its doing.
    history.webhooks.push({ ...webhook(WOO_ORDER, 200, 2), at: 25 });
    expect(checkHistory(history).regressed).toEqual([]);
  });

  it("reports as STALE an order the ledger ended cancelled while its own shipment was delivered (a duplicate's cancellation applied to it)", () => {
    const history = cleanHistory();
    history.dispatch.shipments = [
      shipment(SHOPIFY_ORDER.externalOrderId, 'shp_A', DELIVERED_PATH),
      shipment(SHOPIFY_ORDER.externalOrderId, 'shp_A2', ['CREATED', 'READY', 'CANCELLED']),
      shipment(WOO_ORDER.externalOrderId, 'shp_B', DELIVERED_PATH),
    ];
    history.ledger[0] = ledger(SHOPIFY_ORDER, 'cancelled', 'cancelled', { shipmentId: 'shp_A' });
    const report = checkHistory(history);
    expect(report.stale.map((a) => [a.externalOrderId, a.detail])).toEqual([
      [SHOPIFY_ORDER.externalOrderId, 'the ledger ended the order cancelled but its own shipment shp_A is DELIVERED'],
    ]);
  });
});
