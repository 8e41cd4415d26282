/**
 * Builders for the reconciliation unit tests: a shop of the registry, a normalised order, a shipment as the
 * client reads it, a ledger record. Each takes overrides, so a test states only what it is about.
 */
import { randomBytes } from 'node:crypto';
import { dakarModeShopsDocument } from '../../../test/support/factories.js';
import { buildShopRegistry, type ShopConfig } from '../../shops/shops.js';
import { xof } from '../../domain/money.js';
import { defaultWireProfile } from '../../adapters/dispatch-api/profile.js';
import type { StoreOrder } from '../../domain/order.js';
import type { DeliveryStep } from '../../domain/shipment-status.js';
import type { WireClaim, WireShipment } from '../../adapters/dispatch-api/wire.js';
import type { OrderRecord, OrderState } from '../../ledger/order-ledger.js';

export function testShop(policy: Record<string, unknown> = {}): ShopConfig {
  const secret = () => `pk_live_${randomBytes(8).toString('hex')}`;
  const registry = buildShopRegistry(dakarModeShopsDocument({ baseUrl: 'http://127.0.0.1:9' }, policy), () => secret());
  return registry.get('dakar-mode')!;
}

export function storeOrder(overrides: Partial<StoreOrder> = {}): StoreOrder {
  const orderId = overrides.orderId ?? '1001';
  return {
    platform: 'shopify',
    shopId: 'dakar-mode',
    orderId,
    orderName: '#1001',
    externalOrderId: `dakar-mode:${orderId}`,
    currency: 'XOF',
    total: xof(17_000),
    outstanding: xof(17_000),
    shippingCharged: xof(0),
    paymentFamily: 'cash_on_delivery',
    financialStatus: 'pending',
    platformStatus: 'unfulfilled',
    gatewayNames: ['Cash on Delivery (COD)'],
    cancelled: false,
    dropoff: {
      name: 'Awa Diop',
      phone: '+221771234567',
      address1: 'Villa 12, Sicap Liberté 2',
      city: 'Dakar',
      countryCode: 'SN',
    },
    lineItems: [{ name: 'Boubou', quantity: 1 }],
    createdAt: '2026-11-18T09:30:00Z',
    updatedAt: '2026-11-18T09:30:00Z',
    ...overrides,
  };
}

/** A shipment as the client reads it through the default wire profile: `step` follows `status` unless given. */
export function wireShipment(overrides: Partial<WireShipment> = {}): WireShipment {
  const status = overrides.status ?? 'READY';
  const step = 'step' in overrides ? overrides.step : defaultWireProfile().stepOf(status);
  return {
    shipmentId: 'shp_1',
    externalOrderId: 'dakar-mode:1001',
    quoteId: 'qte_1',
    status: 'READY',
    publicTrackingUrl: undefined,
    trackingCode: 'ABCDE12345',
    orderAmountXof: 17_000,
    courierId: undefined,
    settlementStatus: undefined,
    createdAt: '2026-11-18T09:31:00.000Z',
    updatedAt: undefined,
    statusHistory: undefined,
    ...overrides,
    step,
  };
}

export function ledgerRecord(
  state: OrderState,
  options: { shipmentId?: string; step?: DeliveryStep; order?: StoreOrder; extId?: string; problem?: string } = {},
): OrderRecord {
  const extId = options.extId ?? 'dakar-mode:1001';
  return {
    meta: {
      externalOrderId: extId,
      shopId: 'dakar-mode',
      platform: 'shopify',
      orderId: extId.split(':')[1]!,
      orderName: '#1001',
      firstSeenAt: '2026-11-18T09:30:01Z',
      generation: 0,
    },
    state,
    stateChangedAt: '2026-11-18T09:31:00Z',
    ...(state === 'held'
      ? {
          hold: { code: 'neighbourhood_not_found', message: 'no neighbourhood in "Dakar"', at: '2026-11-18T09:31:00Z' },
        }
      : {}),
    ...(options.order ? { order: options.order } : {}),
    ...(options.shipmentId
      ? { shipment: { shipmentId: options.shipmentId, status: 'READY', createdAt: '2026-11-18T09:31:00Z' } }
      : {}),
    ...(options.step
      ? {
          delivery: {
            step: options.step,
            serviceStatus: options.step.toUpperCase(),
            updatedAt: '2026-11-18T09:31:00Z',
            written: { steps: {} },
            ...(options.problem ? { problem: options.problem } : {}),
          },
        }
      : {}),
  };
}

export function wireClaim(overrides: Partial<WireClaim> = {}): WireClaim {
  return {
    claimId: 'clm_1',
    shipmentId: 'shp_1',
    reason: 'damaged',
    description: 'torn',
    claimantId: 'merchant',
    claimantType: 'seller',
    status: 'OPEN',
    outcome: undefined,
    createdAt: '2026-11-19T10:00:00Z',
    decidedAt: undefined,
    ...overrides,
  };
}
