/**
 * Shopify order webhook body → StoreOrder, or a hold reason the merchant can act on.
 *
 * Decisions (each has a test in normalise.test.ts):
 *  - Identity: the numeric `id` (never `name`); when `id` is missing, or too large for a JSON number to hold
 *    exactly, the digits of `admin_graphql_api_id` (gid://shopify/Order/<id>), which is a string.
 *  - Currency: `currency` is the shop currency and every amount read here (`current_total_price`,
 *    `total_price`, `total_outstanding`) is in it, so it must be XOF. `presentment_currency` (what the buyer
 *    saw, e.g. EUR through Shopify Markets) is NOT a reason to hold: the shop-money amounts are still exact
 *    XOF, and XOF is what a courier in the XOF zone collects. A `*_set.shop_money.currency_code` other than
 *    XOF contradicts `currency` and holds the order.
 *  - Total: `current_total_price` (after edits and refunds), else `total_price`.
 *  - What the courier collects (COD and deposit): `total_outstanding` when present. Without it, a COD order
 *    that is `pending`/`authorized` (or has no status) owes its total and a `paid` one owes nothing; any
 *    other status (partially paid, refunded...) cannot be read safely and holds the order.
 *  - The shop's shipping (what comes out of the balance when the customer pays the delivery at the door): the
 *    shipping still owed after discounts and refunds, with its tax when prices exclude tax (shipping-owed.ts).
 *  - Cancelled orders (`cancelled_at` set) skip the dispatch checks (address, phone, amount): the job only
 *    needs them to cancel a shipment, and holding them would hide the cancellation. They collect 0.
 *  - An address whose name, street and phone all came null (Shopify redacts them from an app without protected
 *    customer data access) holds the order as `customer_data_redacted` (customer-data.ts), not as a bad address.
 *  - platformStatus is `fulfillment_status`, null meaning "unfulfilled" (Shopify's own name for it), so a
 *    policy can see an order the merchant already fulfilled by hand.
 */
import type { StoreAddress, StoreLineItem, StoreOrder } from '../../domain/order.js';
import { externalOrderId } from '../../domain/ids.js';
import { ZERO_XOF } from '../../domain/money.js';
import {
  outstandingFrom,
  assignDefined,
  decidePaymentFamily,
  describeParseError,
  holds,
  joinName,
  nonEmpty,
  readCoordinates,
  readOrderTotal,
  uniqueNonEmpty,
  type NormaliseContext,
  type NormaliseResult,
  type Outstanding,
} from '../../shops/platforms/common.js';
import { customerDataRedacted, customerDataRedactedHold } from './customer-data.js';
import { parseShopifyOrder, type ShopifyAddressPayload, type ShopifyOrderPayload } from './payload.js';
import { shopifyShippingOwed } from './shipping-owed.js';

export type { NormaliseContext, NormaliseResult } from '../../shops/platforms/common.js';
export { parseShopifyOrder } from './payload.js';

const PLATFORM = 'Shopify';
const GID = /^gid:\/\/shopify\/Order\/(\d+)(?:\?.*)?$/;

/** The order's numeric id as a string, from `id` or else the GraphQL gid; undefined when neither is usable. */
export function shopifyOrderId(payload: Pick<ShopifyOrderPayload, 'id' | 'admin_graphql_api_id'>): string | undefined {
  const { id } = payload;
  if (typeof id === 'number' && Number.isSafeInteger(id) && id > 0) return String(id);
  if (typeof id === 'string' && /^\d+$/.test(id) && !/^0+$/.test(id)) return id;
  const gid = nonEmpty(payload.admin_graphql_api_id);
  return gid === undefined ? undefined : GID.exec(gid)?.[1];
}

export function normaliseShopifyOrder(body: unknown, ctx: NormaliseContext): NormaliseResult {
  const parsed = parseShopifyOrder(body);
  if (!parsed.ok) return { ok: false, hold: holds.malformedOrder(PLATFORM, describeParseError(parsed.error)) };
  const p = parsed.order;

  const orderId = shopifyOrderId(p);
  if (orderId === undefined) {
    return { ok: false, hold: holds.malformedOrder(PLATFORM, 'no usable order id in `id` or `admin_graphql_api_id`') };
  }
  const orderName = nonEmpty(p.name) ?? `#${p.order_number ?? orderId}`;
  const held = (hold: StoreOrderHold) => ({ ok: false as const, hold, orderId, orderName });

  const currency = nonEmpty(p.currency)?.toUpperCase();
  if (currency === undefined) return held(holds.malformedOrder(PLATFORM, `order ${orderName} has no currency`));
  if (currency !== 'XOF') return held(holds.currencyNotXof(orderName, currency));
  const contradictingCurrency = [p.current_total_price_set, p.total_price_set]
    .map((bag) => bag?.shop_money?.currency_code.toUpperCase())
    .find((code) => code !== undefined && code !== 'XOF');
  if (contradictingCurrency !== undefined) return held(holds.currencyNotXof(orderName, contradictingCurrency));

  const total = readOrderTotal(p.current_total_price ?? p.total_price, orderName, PLATFORM);
  if (!total.ok) return held(total.hold);

  const createdAt = nonEmpty(p.created_at) ?? nonEmpty(p.processed_at) ?? nonEmpty(p.updated_at);
  if (createdAt === undefined) return held(holds.malformedOrder(PLATFORM, `order ${orderName} has no creation date`));

  const gatewayNames = uniqueNonEmpty([...(p.payment_gateway_names ?? []), p.gateway]);
  const financialStatus = nonEmpty(p.financial_status) ?? 'unknown';
  const paymentFamily = decidePaymentFamily({
    gateways: gatewayNames,
    ctx,
    codPartiallyPaid: financialStatus === 'partially_paid',
  });
  const cancelled = nonEmpty(p.cancelled_at) !== undefined;

  const dropoff = dropoffOf(p);
  let outstandingXof = ZERO_XOF;
  if (!cancelled) {
    if (customerDataRedacted(p)) return held(customerDataRedactedHold(orderName));
    if (dropoff === undefined) return held(holds.noDeliveryAddress(orderName));
    if (dropoff.phone === undefined) return held(holds.noPhone(orderName));
    if (paymentFamily === 'cash_on_delivery' || paymentFamily === 'deposit_then_balance') {
      const outstanding: Outstanding =
        p.total_outstanding === undefined || p.total_outstanding === null
          ? outstandingWithoutField(financialStatus, paymentFamily)
          : { kind: 'amount', raw: p.total_outstanding };
      const owed = outstandingFrom({ orderName, total: total.value, outstanding });
      if (!owed.ok) return held(owed.hold);
      outstandingXof = owed.value;
    }
  }

  const externalId = externalOrderId(ctx.shopId, orderId);
  const order: StoreOrder = {
    platform: 'shopify',
    shopId: ctx.shopId,
    orderId,
    orderName,
    externalOrderId: externalId,
    currency,
    total: total.value,
    outstanding: outstandingXof,
    shippingCharged: shopifyShippingOwed(p),
    paymentFamily,
    financialStatus,
    platformStatus: nonEmpty(p.fulfillment_status) ?? 'unfulfilled',
    gatewayNames,
    cancelled,
    dropoff: dropoff ?? { name: personName(p.billing_address) ?? customerName(p) ?? '' },
    lineItems: lineItemsOf(p),
    createdAt,
    updatedAt: nonEmpty(p.updated_at) ?? createdAt,
  };
  const weight = p.total_weight;
  if (typeof weight === 'number' && Number.isFinite(weight) && weight > 0) order.weightGrams = weight;
  return { ok: true, order };
}

type StoreOrderHold = Extract<NormaliseResult, { ok: false }>['hold'];

/**
 * Without `total_outstanding` (older API versions, some apps): a COD order not yet paid owes its total and a
 * paid one owes nothing; for any other status the outstanding balance cannot be told from the order.
 */
function outstandingWithoutField(
  financialStatus: string,
  family: 'cash_on_delivery' | 'deposit_then_balance',
): Outstanding {
  if (family === 'cash_on_delivery') {
    if (financialStatus === 'pending' || financialStatus === 'authorized' || financialStatus === 'unknown')
      return { kind: 'total' };
    if (financialStatus === 'paid') return { kind: 'amount', raw: 0 };
  }
  return { kind: 'unknown', why: `Shopify gives no outstanding balance for this ${financialStatus} order` };
}

function dropoffOf(p: ShopifyOrderPayload): StoreAddress | undefined {
  const shipping = hasAddressContent(p.shipping_address) ? p.shipping_address : undefined;
  const billing = hasAddressContent(p.billing_address) ? p.billing_address : undefined;
  const chosen = shipping ?? billing;
  if (!chosen) return undefined;

  const address: StoreAddress = {
    name: personName(chosen) ?? personName(p.billing_address) ?? customerName(p) ?? '',
  };
  const phone =
    nonEmpty(chosen.phone) ??
    nonEmpty(p.billing_address?.phone) ??
    nonEmpty(p.customer?.phone) ??
    nonEmpty(p.customer?.default_address?.phone) ??
    nonEmpty(p.phone);
  assignDefined(address, {
    phone,
    company: nonEmpty(chosen.company),
    address1: nonEmpty(chosen.address1),
    address2: nonEmpty(chosen.address2),
    city: nonEmpty(chosen.city),
    province: nonEmpty(chosen.province),
    zip: nonEmpty(chosen.zip),
    countryCode: nonEmpty(chosen.country_code)?.toUpperCase(),
    coords: readCoordinates(chosen.latitude, chosen.longitude),
  });
  return address;
}

function hasAddressContent(address: ShopifyAddressPayload | null | undefined): address is ShopifyAddressPayload {
  if (!address) return false;
  return (
    [address.address1, address.address2, address.city, address.province, address.zip].some(
      (v) => nonEmpty(v) !== undefined,
    ) || readCoordinates(address.latitude, address.longitude) !== undefined
  );
}

function personName(address: ShopifyAddressPayload | null | undefined): string | undefined {
  if (!address) return undefined;
  return joinName(address.first_name, address.last_name) ?? nonEmpty(address.name);
}

function customerName(p: ShopifyOrderPayload): string | undefined {
  return p.customer ? joinName(p.customer.first_name, p.customer.last_name) : undefined;
}

/** Lines removed by an order edit or refund (current_quantity 0) are not in the parcel. */
function lineItemsOf(p: ShopifyOrderPayload): StoreLineItem[] {
  const lines: StoreLineItem[] = [];
  for (const line of p.line_items ?? []) {
    const quantity = line.current_quantity ?? line.quantity ?? 0;
    if (quantity <= 0) continue;
    const item: StoreLineItem = { name: nonEmpty(line.name) ?? nonEmpty(line.title) ?? '', quantity };
    assignDefined(item, {
      productId: idString(line.product_id),
      variantId: idString(line.variant_id),
      unitGrams: typeof line.grams === 'number' && line.grams > 0 ? line.grams : undefined,
    });
    lines.push(item);
  }
  return lines;
}

function idString(id: number | string | null | undefined): string | undefined {
  if (typeof id === 'number') return Number.isSafeInteger(id) && id > 0 ? String(id) : undefined;
  return nonEmpty(id);
}
