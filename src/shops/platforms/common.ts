/**
 * What the Shopify and WooCommerce edges share: the normalisation contract, the hold reasons they can
 * give (stable codes, messages written for the merchant), and the small, careful pieces both need
 * (header lookup, constant-time signature comparison, exact money, coordinates, gateway matching).
 * Nothing here knows a platform payload type.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { z } from 'zod';
import type { Coordinates, HoldReason, PaymentFamily, StoreOrder } from '../../domain/order.js';
import { MoneyError, parseXofDecimal, ZERO_XOF, type Xof } from '../../domain/money.js';

export type IncomingHeaders = Record<string, string | string[] | undefined>;

export interface NormaliseContext {
  /** The shop's id in the Relais shop registry. */
  shopId: string;
  /**
   * Gateway names or ids that mean cash on delivery, compared case-insensitively. DEFAULT_COD_GATEWAYS are
   * always added: treating a COD order as prepaid would ship the goods without collecting their value.
   */
  codGateways: string[];
  /** Gateways billed to a business account later: nothing is collected at the door. */
  businessAccountGateways?: string[];
  /** Gateways where the customer paid a deposit online and pays the balance at the door. */
  depositGateways?: string[];
}

export type NormaliseResult =
  { ok: true; order: StoreOrder } | { ok: false; hold: HoldReason; orderId?: string; orderName?: string };

/** Shopify's default manual method name, WooCommerce's COD gateway id, and the usual snake_case spelling. */
export const DEFAULT_COD_GATEWAYS: readonly string[] = ['Cash on Delivery (COD)', 'cod', 'cash_on_delivery'];

/**
 * One table from a verification failure to the HTTP status the receiver answers. A missing header or a
 * malformed ping is a broken request (400); a signature that does not match is an unauthenticated one (401),
 * as in shopify-api's `webhooks.process()`.
 */
export const VERIFICATION_FAILURE_STATUS = {
  missing_headers: 400,
  malformed_ping: 400,
  invalid_hmac: 401,
  invalid_signature: 401,
} as const satisfies Record<string, 400 | 401>;

/**
 * First value of a header, looked up case-insensitively (Node lower-cases, tests and proxies may not). Runs several
 * times per webhook: no entry pairs built, and a name is lower-cased only when its length matches and it differs.
 */
export function headerValue(headers: IncomingHeaders, name: string): string | undefined {
  const wanted = name.toLowerCase();
  for (const key in headers) {
    if (key.length !== wanted.length || (key !== wanted && key.toLowerCase() !== wanted)) continue;
    const value = headers[key];
    const first = Array.isArray(value) ? value[0] : value;
    if (first !== undefined && first !== '') return first;
  }
  return undefined;
}

/** base64(HMAC-SHA256(secret, bytes)): the signature both Shopify and WooCommerce put in a header. */
export function hmacSha256Base64(secret: string, body: Buffer | string): string {
  return createHmac('sha256', secret).update(body).digest('base64');
}

/**
 * Compares a received signature with the expected one in constant time. crypto.timingSafeEqual throws on
 * inputs of different lengths, so the length is checked first; that only reveals the length of a base64
 * SHA-256 digest, which is public.
 */
export function signaturesMatch(expected: string, received: string): boolean {
  const a = Buffer.from(expected, 'utf8');
  const b = Buffer.from(received, 'utf8');
  if (a.length !== b.length) return false;
  return timingSafeEqual(a, b);
}

export type MoneyReading = { ok: true; value: Xof } | { ok: false; problem: 'fraction' | 'malformed' };

/** Reads a shop decimal ("15000.00", 15000) as whole francs, saying why when it cannot. */
export function readXof(input: string | number): MoneyReading {
  try {
    return { ok: true, value: parseXofDecimal(input) };
  } catch (error) {
    if (error instanceof MoneyError && /fraction/.test(error.message)) return { ok: false, problem: 'fraction' };
    return { ok: false, problem: 'malformed' };
  }
}

/**
 * Coordinates from whatever a platform sends: numbers (current Shopify), numeric strings (older Shopify,
 * WooCommerce meta), null or nothing. Both must be present, finite and in range. (0, 0) is treated as absent:
 * it is in the Gulf of Guinea and is what a form left at its default produces, never a delivery point.
 */
export function readCoordinates(lat: unknown, lng: unknown): Coordinates | undefined {
  const latitude = toFiniteNumber(lat);
  const longitude = toFiniteNumber(lng);
  if (latitude === undefined || longitude === undefined) return undefined;
  if (Math.abs(latitude) > 90 || Math.abs(longitude) > 180) return undefined;
  if (latitude === 0 && longitude === 0) return undefined;
  return { lat: latitude, lng: longitude };
}

function toFiniteNumber(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (typeof value === 'string' && value.trim() !== '') {
    const parsed = Number(value.trim());
    return Number.isFinite(parsed) ? parsed : undefined;
  }
  return undefined;
}

/** True when any of `gateways` is in `list`, ignoring case and surrounding spaces. */
export function matchesGateway(gateways: readonly string[], list: readonly string[] | undefined): boolean {
  if (!list || list.length === 0) return false;
  const wanted = new Set(list.map(normaliseGatewayName));
  return gateways.some((gateway) => wanted.has(normaliseGatewayName(gateway)));
}

function normaliseGatewayName(name: string): string {
  return name.trim().toLowerCase();
}

export function codGatewaysOf(ctx: NormaliseContext): string[] {
  return [...DEFAULT_COD_GATEWAYS, ...ctx.codGateways];
}

/**
 * The payment family from the gateways an order was paid with. The merchant's own lists come first (a
 * business-account or deposit gateway is never mistaken for plain COD); a COD gateway on an order that is
 * already partly paid is a deposit with the balance due at the door.
 */
export function decidePaymentFamily(input: {
  gateways: readonly string[];
  ctx: NormaliseContext;
  codPartiallyPaid: boolean;
}): PaymentFamily {
  const { gateways, ctx } = input;
  if (matchesGateway(gateways, ctx.businessAccountGateways)) return 'business_account';
  if (matchesGateway(gateways, ctx.depositGateways)) return 'deposit_then_balance';
  if (matchesGateway(gateways, codGatewaysOf(ctx)))
    return input.codPartiallyPaid ? 'deposit_then_balance' : 'cash_on_delivery';
  return 'prepaid';
}

/**
 * One shipping figure of the shop's (WooCommerce shipping_total or shipping_tax), in whole francs;
 * 0 when absent (older payloads) or unreadable, never negative. Only used to tell goods from shipping in what is
 * owed, so an unreadable figure counts as no shipping rather than holding the order.
 */
export function shippingChargedFrom(amount: string | number | null | undefined): Xof {
  if (amount === undefined || amount === null) return ZERO_XOF;
  const reading = readXof(amount);
  return reading.ok && reading.value > 0 ? reading.value : ZERO_XOF;
}

/** What the platform says the customer still owes, as far as it can tell. */
export type Outstanding =
  { kind: 'amount'; raw: string | number } | { kind: 'total' } | { kind: 'unknown'; why: string };

export type OutstandingAmount = { ok: true; value: Xof } | { ok: false; hold: HoldReason };

/**
 * The outstanding of a COD or deposit order (StoreOrder.outstanding): the balance the shop says is still owed,
 * which must be a whole, positive number of francs no larger than the order total. Never 0: a COD parcel sent with
 * nothing to collect would be handed over for free. The goods the courier collects are worked out from it
 * (src/domain/door-amount.ts goodsOwed).
 */
export function outstandingFrom(input: { orderName: string; total: Xof; outstanding: Outstanding }): OutstandingAmount {
  const { orderName, total, outstanding } = input;
  if (outstanding.kind === 'unknown') return { ok: false, hold: holds.codAmountUnknown(orderName, outstanding.why) };
  let owed: Xof = total;
  if (outstanding.kind === 'amount') {
    const reading = readXof(outstanding.raw);
    if (!reading.ok) {
      return {
        ok: false,
        hold:
          reading.problem === 'fraction'
            ? holds.amountHasFraction(orderName, 'an amount left to pay of', String(outstanding.raw))
            : holds.codAmountUnknown(
                orderName,
                `the amount left to pay ("${String(outstanding.raw)}") is not a number`,
              ),
      };
    }
    owed = reading.value;
  }
  if (owed < 0 || owed > total)
    return { ok: false, hold: holds.codAmountInconsistent(orderName, `${owed} XOF`, `${total} XOF`) };
  if (owed === 0) return { ok: false, hold: holds.codNothingToCollect(orderName) };
  return { ok: true, value: owed };
}

/** A short, value-free description of why a payload did not parse (paths and expectations, no customer data). */
export function describeParseError(error: z.ZodError): string {
  const first = error.issues[0];
  if (!first) return 'unreadable payload';
  const path = first.path.map(String).join('.');
  const more = error.issues.length > 1 ? ` (and ${error.issues.length - 1} more)` : '';
  return `${path === '' ? 'body' : path}: ${first.message}${more}`;
}

/** Copies only the defined values, so optional fields are absent rather than present-and-undefined. */
export function assignDefined<T extends object>(target: T, values: Partial<T>): void {
  for (const [key, value] of Object.entries(values)) {
    if (value !== undefined) (target as Record<string, unknown>)[key] = value;
  }
}

/** Distinct non-empty values, in first-seen order. */
export function uniqueNonEmpty(values: ReadonlyArray<string | null | undefined>): string[] {
  const out: string[] = [];
  for (const value of values) {
    const v = nonEmpty(value);
    if (v !== undefined && !out.includes(v)) out.push(v);
  }
  return out;
}

/** "First Last" from two optional parts; undefined when both are blank. */
export function joinName(first: string | null | undefined, last: string | null | undefined): string | undefined {
  return nonEmpty([nonEmpty(first), nonEmpty(last)].filter((part) => part !== undefined).join(' '));
}

/** Trims, and turns empty strings into undefined, so "" never passes for an address line or a phone. */
export function nonEmpty(value: string | null | undefined): string | undefined {
  if (value === null || value === undefined) return undefined;
  const trimmed = value.trim();
  return trimmed === '' ? undefined : trimmed;
}

/** A payload's text field, trimmed, when it is a non-empty string (read even from a payload too broken to normalise). */
export function textField(payload: unknown, key: string): string | undefined {
  if (!payload || typeof payload !== 'object') return undefined;
  const value = (payload as Record<string, unknown>)[key];
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
}

/** The hold reasons both platforms give. Messages name the order and say what the merchant can do. */
export const holds = {
  malformedOrder(platform: string, detail: string): HoldReason {
    return {
      code: 'malformed_order',
      message: `A ${platform} order webhook could not be read (${detail}). Relais cannot tell which order it is; check the webhook's API version and dispatch the order by hand if needed.`,
    };
  },
  currencyNotXof(orderName: string, currency: string): HoldReason {
    return {
      code: 'currency_not_xof',
      message: `order ${orderName} is in ${currency}; Relais only ships orders in XOF (West African CFA franc). Change the shop currency or dispatch this order by hand.`,
    };
  },
  amountHasFraction(orderName: string, field: string, amount: string): HoldReason {
    return {
      code: 'amount_has_fraction',
      message: `order ${orderName} has ${field} ${amount}, a fraction of a franc; XOF amounts are whole francs. Check the shop's currency and prices, or dispatch this order by hand.`,
    };
  },
  codAmountInconsistent(orderName: string, owed: string, total: string): HoldReason {
    return {
      code: 'cod_amount_inconsistent',
      message: `order ${orderName}: the amount left to pay (${owed}) does not fit the order total (${total}). Check the order's payments before Relais sends a courier to collect cash.`,
    };
  },
  codNothingToCollect(orderName: string): HoldReason {
    return {
      code: 'cod_nothing_to_collect',
      message: `order ${orderName} is cash on delivery but nothing is left to pay. Relais never sends a cash-on-delivery parcel with 0 to collect: mark the order as paid by another method, or dispatch it by hand.`,
    };
  },
  codAmountUnknown(orderName: string, why: string): HoldReason {
    return {
      code: 'cod_amount_unknown',
      message: `order ${orderName}: ${why}, so Relais cannot tell how much the courier must collect. Dispatch this order by hand.`,
    };
  },
  noDeliveryAddress(orderName: string): HoldReason {
    return {
      code: 'no_delivery_address',
      message: `order ${orderName} has neither a shipping nor a billing address. Add the customer's address to the order, then replay it.`,
    };
  },
  noPhone(orderName: string): HoldReason {
    return {
      code: 'no_phone',
      message: `order ${orderName} has no phone number for the customer; a courier cannot find the customer or collect cash without one. Add a phone number to the shipping address, then replay the order.`,
    };
  },
} as const;

// ---- webhook bodies ----------------------------------------------------------------------------------

/**
 * Deepest JSON accepted. A real order is about 6 levels deep; a body of thousands of nested arrays parses,
 * but then overflows the stack when the job is serialised, which answered 503 (retry) for input that can
 * never succeed.
 */
export const MAX_JSON_DEPTH = 64;

/** The answer to a body that is not what the platform sends: `what` says what was expected ("JSON", "a JSON object"). */
export function malformedBody(what: string): { error: 'malformed_body'; message: string } {
  return {
    error: 'malformed_body',
    message: `the body is not ${what}, or is nested deeper than ${String(MAX_JSON_DEPTH)} levels`,
  };
}

/**
 * The body's JSON, or undefined when it is not JSON or nests deeper than MAX_JSON_DEPTH.
 *
 * Parsed once, then the depth is checked on the parsed value: V8 parses any depth without recursing, and walking a
 * 9 kB order's few hundred objects and arrays costs a fraction of scanning its bytes (the receiver's profile). The
 * walk itself never goes deeper than MAX_JSON_DEPTH + 1 calls.
 */
export function parseJson(raw: Buffer): unknown {
  let value: unknown;
  try {
    value = JSON.parse(raw.toString('utf8')) as unknown;
  } catch {
    return undefined;
  }
  return nestsDeeperThan(value, MAX_JSON_DEPTH) ? undefined : value;
}

/** Whether arrays and objects nest more than `levels` deep in a parsed JSON value (a scalar is at no level). */
export function nestsDeeperThan(value: unknown, levels: number): boolean {
  if (value === null || typeof value !== 'object') return false;
  if (levels === 0) return true;
  if (Array.isArray(value)) {
    for (const item of value as unknown[]) if (nestsDeeperThan(item, levels - 1)) return true;
    return false;
  }
  for (const key in value) if (nestsDeeperThan((value as Record<string, unknown>)[key], levels - 1)) return true;
  return false;
}

/** An order's total in whole francs, or the hold that says why it cannot be read (none, a fraction, negative). */
export function readOrderTotal(
  raw: string | number | null | undefined,
  orderName: string,
  platform: string,
): { ok: true; value: Xof } | { ok: false; hold: HoldReason } {
  if (raw === undefined || raw === null)
    return { ok: false, hold: holds.malformedOrder(platform, `order ${orderName} has no total`) };
  const total = readXof(raw);
  if (!total.ok) {
    const hold =
      total.problem === 'fraction'
        ? holds.amountHasFraction(orderName, 'a total of', String(raw))
        : holds.malformedOrder(platform, `order ${orderName} has an unreadable total`);
    return { ok: false, hold };
  }
  if (total.value < 0)
    return { ok: false, hold: holds.malformedOrder(platform, `order ${orderName} has a negative total`) };
  return { ok: true, value: total.value };
}
