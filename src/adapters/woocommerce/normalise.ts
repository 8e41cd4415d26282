/**
 * WooCommerce order webhook body → StoreOrder, or a hold reason the merchant can act on.
 *
 * Decisions (each has a test in normalise.test.ts):
 *  - Identity: the numeric `id`; the display name is `#<number>` (`number` can differ from `id` with
 *    sequential-number plugins).
 *  - Cancelled: status `cancelled`, `refunded`, `failed` (the payment failed: the goods must not leave) or
 *    `trash`. `pending` and `on-hold` are not cancellations; whether to ship them is the shop policy's call,
 *    from platformStatus. financialStatus and platformStatus both carry the raw `status` (WooCommerce has one
 *    status for both).
 *  - Of those, `failed`, `cancelled` and `trash` can come back (the customer pays again, the merchant restores
 *    the order): `stoppedInShop` says why the order waits, held, for the shop to say ship it. `refunded` is
 *    over: the money went back to the customer.
 *  - What the courier collects for COD: `total` minus the refunds already made (`refunds[].total`, negative
 *    strings), since WooCommerce keeps `total` unchanged after a refund. Core has no partial payment and no
 *    outstanding balance, so a deposit gateway cannot be read safely and holds the order rather than collect
 *    the full total twice.
 *  - The shop's shipping (what comes out of the balance when the customer pays the delivery at the door): the
 *    shipping still owed, `shipping_total` plus `shipping_tax` less what refunds gave back of both
 *    (`refunds[].shipping_lines`, read from the refunds themselves by refunds.ts: the body lists only each refund's
 *    total). WooCommerce keeps shipping costs before tax whatever `prices_include_tax` says, and the tax on them is
 *    part of what the customer paid for the shop's shipping. A refund whose lines were not read counts as goods.
 *  - Address: `shipping` when it has an address, else `billing`. Name from shipping first/last, else billing;
 *    phone from `shipping.phone` (WooCommerce 5.6+), else `billing.phone`.
 *  - Coordinates: core has none. Geolocation plugins store them as order meta; the keys read are
 *    `_<shipping|billing>_lat`/`_lng` and `_<shipping|billing>_latitude`/`_longitude`, for the address used.
 *  - Weight: line items carry none. Lines keep productId and variantId (variation_id 0 means none), with
 *    unitGrams undefined; weights are read from the products later, outside this module.
 *  - Dates: `date_*_gmt` are UTC without a zone designator; a `Z` is added so they are unambiguous ISO 8601.
 *  - Cancelled orders skip the dispatch checks (address, phone, amount), as for Shopify.
 */
import type { StoreAddress, StoreLineItem, StoreOrder } from '../../domain/order.js';
import { externalOrderId } from '../../domain/ids.js';
import { ZERO_XOF, addXof, subtractXof, type Xof } from '../../domain/money.js';
import {
  outstandingFrom,
  shippingChargedFrom,
  assignDefined,
  decidePaymentFamily,
  describeParseError,
  holds,
  joinName,
  nonEmpty,
  readCoordinates,
  readOrderTotal,
  readXof,
  uniqueNonEmpty,
  type NormaliseContext,
  type NormaliseResult,
} from '../../shops/platforms/common.js';
import { parseWooOrder, type WooAddressPayload, type WooOrderPayload } from './payload.js';

export type { NormaliseContext, NormaliseResult } from '../../shops/platforms/common.js';
export { parseWooOrder } from './payload.js';

const PLATFORM = 'WooCommerce';
const CANCELLED_STATUSES: ReadonlySet<string> = new Set(['cancelled', 'refunded', 'failed', 'trash']);

/** Cancelled statuses the order can leave again, with what the merchant is told while it waits. */
const RESTORABLE: Readonly<Record<string, { code: string; why: string }>> = {
  failed: { code: 'shop_payment_failed', why: 'its payment failed (status failed); the customer may pay again' },
  cancelled: { code: 'shop_cancelled', why: 'it was cancelled in the shop (status cancelled)' },
  trash: { code: 'shop_cancelled', why: 'it was moved to the trash in the shop' },
};

/** Why a cancelled order that can come back is not shipped, as the hold it waits in (undefined: over for good). */
function stoppedInShop(orderName: string, status: string): Hold | undefined {
  const restorable = RESTORABLE[status];
  if (!restorable) return undefined;
  return {
    code: restorable.code,
    message: `WooCommerce order ${orderName} is not shipped: ${restorable.why}.`,
  };
}

type Hold = Extract<NormaliseResult, { ok: false }>['hold'];

/** The order's numeric id as a string; undefined when absent or not a positive whole number. */
export function wooOrderId(payload: Pick<WooOrderPayload, 'id'>): string | undefined {
  const { id } = payload;
  if (typeof id === 'number') return Number.isSafeInteger(id) && id > 0 ? String(id) : undefined;
  if (typeof id === 'string' && /^\d+$/.test(id) && !/^0+$/.test(id)) return id;
  return undefined;
}

export function normaliseWooOrder(body: unknown, ctx: NormaliseContext): NormaliseResult {
  const parsed = parseWooOrder(body);
  if (!parsed.ok) return { ok: false, hold: holds.malformedOrder(PLATFORM, describeParseError(parsed.error)) };
  const p = parsed.order;

  const orderId = wooOrderId(p);
  if (orderId === undefined) return { ok: false, hold: holds.malformedOrder(PLATFORM, 'no usable order id in `id`') };
  const orderName = `#${nonEmpty(p.number === undefined || p.number === null ? undefined : String(p.number)) ?? orderId}`;
  const held = (hold: Hold) => ({ ok: false as const, hold, orderId, orderName });

  const currency = nonEmpty(p.currency)?.toUpperCase();
  if (currency === undefined) return held(holds.malformedOrder(PLATFORM, `order ${orderName} has no currency`));
  if (currency !== 'XOF') return held(holds.currencyNotXof(orderName, currency));

  const total = readOrderTotal(p.total, orderName, PLATFORM);
  if (!total.ok) return held(total.hold);

  const createdAt = utcIso(p.date_created_gmt) ?? nonEmpty(p.date_created);
  if (createdAt === undefined) return held(holds.malformedOrder(PLATFORM, `order ${orderName} has no creation date`));

  const status = nonEmpty(p.status)?.toLowerCase() ?? 'unknown';
  const cancelled = CANCELLED_STATUSES.has(status);
  const stopped = cancelled ? stoppedInShop(orderName, status) : undefined;
  const gatewayNames = uniqueNonEmpty([p.payment_method, p.payment_method_title]);
  const paymentFamily = decidePaymentFamily({ gateways: gatewayNames, ctx, codPartiallyPaid: false });

  const dropoff = dropoffOf(p);
  let outstandingXof = ZERO_XOF;
  if (!cancelled) {
    if (dropoff === undefined) return held(holds.noDeliveryAddress(orderName));
    if (dropoff.phone === undefined) return held(holds.noPhone(orderName));
    if (paymentFamily === 'deposit_then_balance') {
      return held(holds.codAmountUnknown(orderName, 'WooCommerce does not record how much of a deposit was paid'));
    }
    if (paymentFamily === 'cash_on_delivery') {
      const refunded = refundedAmount(p);
      if (!refunded.ok)
        return held(
          refunded.problem === 'fraction'
            ? holds.amountHasFraction(orderName, 'a refund of', refunded.raw)
            : holds.codAmountUnknown(orderName, `a refund amount ("${refunded.raw}") is not a number`),
        );
      const owed = outstandingFrom({
        orderName,
        total: total.value,
        outstanding: { kind: 'amount', raw: subtractXof(total.value, refunded.value) },
      });
      if (!owed.ok) return held(owed.hold);
      outstandingXof = owed.value;
    }
  }

  const order: StoreOrder = {
    platform: 'woocommerce',
    shopId: ctx.shopId,
    orderId,
    orderName,
    externalOrderId: externalOrderId(ctx.shopId, orderId),
    currency,
    total: total.value,
    outstanding: outstandingXof,
    shippingCharged: wooShippingOwed(p),
    paymentFamily,
    financialStatus: status,
    platformStatus: status,
    gatewayNames,
    cancelled,
    ...(stopped ? { stoppedInShop: stopped } : {}),
    dropoff: dropoff ?? { name: joinName(p.billing?.first_name, p.billing?.last_name) ?? '' },
    lineItems: lineItemsOf(p),
    createdAt,
    updatedAt: utcIso(p.date_modified_gmt) ?? nonEmpty(p.date_modified) ?? createdAt,
  };
  return { ok: true, order };
}

/** The shipping and its tax, less what refunds gave back of them (negative lines), never below 0. */
export function wooShippingOwed(p: WooOrderPayload): Xof {
  const charged = addXof(shippingChargedFrom(p.shipping_total), shippingChargedFrom(p.shipping_tax));
  let refunded = ZERO_XOF;
  for (const line of (p.refunds ?? []).flatMap((refund) => refund.shipping_lines ?? [])) {
    refunded = addXof(refunded, addXof(unsignedXof(line.total), unsignedXof(line.total_tax)));
  }
  return refunded >= charged ? ZERO_XOF : subtractXof(charged, refunded);
}

/** Whole francs of a refund figure, whatever its sign (WooCommerce writes refunds negative); 0 when unreadable. */
function unsignedXof(value: string | number | null | undefined): Xof {
  if (value === undefined || value === null) return ZERO_XOF;
  return shippingChargedFrom(typeof value === 'number' ? Math.abs(value) : value.trim().replace(/^-/, ''));
}

type RefundReading = { ok: true; value: Xof } | { ok: false; problem: 'fraction' | 'malformed'; raw: string };

/** Sum of refunds already made. WooCommerce lists them as negative amounts; the sign is ignored. */
function refundedAmount(p: WooOrderPayload): RefundReading {
  let sum = ZERO_XOF;
  for (const refund of p.refunds ?? []) {
    if (refund.total === undefined || refund.total === null) continue;
    const raw = String(refund.total).trim().replace(/^-/, '');
    const reading = readXof(raw);
    if (!reading.ok) return { ok: false, problem: reading.problem, raw: String(refund.total) };
    sum = addXof(sum, reading.value);
  }
  return { ok: true, value: sum };
}

function dropoffOf(p: WooOrderPayload): StoreAddress | undefined {
  const useShipping = hasAddressContent(p.shipping);
  const chosen = useShipping ? p.shipping : hasAddressContent(p.billing) ? p.billing : undefined;
  if (!chosen) return undefined;

  const address: StoreAddress = {
    name:
      joinName(p.shipping?.first_name, p.shipping?.last_name) ??
      joinName(p.billing?.first_name, p.billing?.last_name) ??
      '',
  };
  assignDefined(address, {
    phone: nonEmpty(p.shipping?.phone) ?? nonEmpty(p.billing?.phone),
    company: nonEmpty(chosen.company),
    address1: nonEmpty(chosen.address_1),
    address2: nonEmpty(chosen.address_2),
    city: nonEmpty(chosen.city),
    province: nonEmpty(chosen.state),
    zip: nonEmpty(chosen.postcode),
    countryCode: nonEmpty(chosen.country)?.toUpperCase(),
    coords: coordinatesFromMeta(p, useShipping ? 'shipping' : 'billing'),
  });
  return address;
}

function hasAddressContent(address: WooAddressPayload | null | undefined): address is WooAddressPayload {
  if (!address) return false;
  return [address.address_1, address.address_2, address.city, address.state, address.postcode].some(
    (value) => nonEmpty(value) !== undefined,
  );
}

function coordinatesFromMeta(p: WooOrderPayload, kind: 'shipping' | 'billing') {
  const meta = new Map<string, unknown>();
  for (const entry of p.meta_data ?? []) if (!meta.has(entry.key)) meta.set(entry.key, entry.value);
  return (
    readCoordinates(meta.get(`_${kind}_lat`), meta.get(`_${kind}_lng`)) ??
    readCoordinates(meta.get(`_${kind}_latitude`), meta.get(`_${kind}_longitude`))
  );
}

function lineItemsOf(p: WooOrderPayload): StoreLineItem[] {
  const lines: StoreLineItem[] = [];
  for (const line of p.line_items ?? []) {
    const quantity = line.quantity ?? 0;
    if (quantity <= 0) continue;
    const item: StoreLineItem = { name: nonEmpty(line.name) ?? '', quantity };
    assignDefined(item, { productId: positiveId(line.product_id), variantId: positiveId(line.variation_id) });
    lines.push(item);
  }
  return lines;
}

/** WooCommerce uses 0 for "no product" / "no variation". */
function positiveId(id: number | string | null | undefined): string | undefined {
  if (typeof id === 'number') return Number.isSafeInteger(id) && id > 0 ? String(id) : undefined;
  const text = nonEmpty(id);
  return text === undefined || /^0+$/.test(text) ? undefined : text;
}

/** `2017-03-22T19:28:02` (UTC, no zone) → `2017-03-22T19:28:02Z`; values with a zone are kept. */
export function utcIso(value: string | null | undefined): string | undefined {
  const text = nonEmpty(value);
  if (text === undefined) return undefined;
  return /(?:Z|[+-]\d{2}:?\d{2})$/i.test(text) ? text : `${text}Z`;
}
