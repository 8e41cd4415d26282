/**
 * The door of a shop platform. Everything Relais needs from Shopify, WooCommerce or the next one is a member
 * of StorePlatform; each platform is one folder under src/shops/platforms/ that provides all of it, named once in the
 * registry (src/shops/platforms/index.ts) whose type makes the compiler list any member a new platform leaves out.
 * Past src/shops/platforms/ nothing branches on a platform's name: the callers look the shop's platform up there.
 *
 *   intake        verify an order webhook, find its shop, and say what to enqueue (http/routes/webhooks.ts)
 *   orders        normalise a payload to a StoreOrder, read its version, confirm it is the shop's
 *   policy        when an order ships (jobs/policy.ts), and how its standing reads in a reconciliation finding
 *   write back    the ShopWriter (stores/writer.ts), the weights the platform leaves off its orders
 *   reconcile     the shop's orders, page by page (ShopOrderLister)
 *   checkout      the platform's rate request and answer around the neutral price (checkout/routes.ts)
 *   doctor        the shop's credentials, currency, webhook subscriptions (ops/doctor.ts)
 */
import type { RedisClient } from '../../redis.js';
import type { z } from 'zod';
import type { ShopConfig, ShopOf, ShopRegistry } from '../shops.js';
import type { CheckoutRateOutcome, CheckoutRateRequest } from '../../checkout/checkout-rates.js';
import type { Eligibility, StoreOrder } from '../../domain/order.js';
import type { Logger } from '../../log.js';
import type { CheckResult } from '../../domain/checks.js';
import type { IncomingHeaders, NormaliseContext, NormaliseResult } from './common.js';
import type { PlatformName } from './settings.js';
import type { ShopWriter } from './writer.js';

export type { PlatformName } from './settings.js';

/** Why a request that claims to come from a shop was not taken; src/shops/platforms/verification-status.ts maps each to a status. */
export type VerificationFailure =
  | 'missing_headers'
  | 'malformed_body'
  | 'malformed_ping'
  | 'missing_signature'
  | 'invalid_signature'
  | 'invalid_hmac'
  | 'shop_mismatch'
  | 'shop_unconfirmed'
  | 'shop_domain_mismatch'
  | 'unknown_shop';

/** A webhook delivery as the route received it: the exact bytes (signatures cover them), the headers, the URL's shop id. */
export interface WebhookDelivery {
  rawBody: Buffer;
  headers: IncomingHeaders;
  /** `:shopId` of the route's path, for platforms whose URL names the shop. */
  shopId?: string;
}

/** What the intake makes of a delivery; the route only maps it (enqueue, answer, refuse). */
export type WebhookReceipt =
  /** Verified, about an order (or a compliance topic): to be enqueued once, under `eventKey`. */
  | { kind: 'event'; shop: ShopConfig; topic: string; payload: unknown; eventKey: string }
  /** Verified, nothing to do: answered 200 with this body (a ping, a topic Relais does not act on). */
  | { kind: 'answer'; body: Record<string, unknown> }
  /** Refused: the status comes from the reason; `warn` is the log line, when the refusal is worth one. */
  | {
      kind: 'rejected';
      reason: VerificationFailure;
      body: Record<string, unknown>;
      warn?: { msg: string; fields: Record<string, unknown> };
    };

/** The refusal of a delivery that did not verify (headers missing, signature wrong): a warning naming the shop. */
export function unverifiedDelivery(
  platformLabel: string,
  shopId: string,
  failure: { reason: VerificationFailure; missing?: string[] },
): WebhookReceipt {
  return {
    kind: 'rejected',
    reason: failure.reason,
    body: { error: failure.reason, missing: failure.missing },
    warn: { msg: `rejected a ${platformLabel} webhook`, fields: { shop: shopId, reason: failure.reason } },
  };
}

export interface WebhookIntake {
  /** The route shops deliver to, in Express syntax: `/webhooks/shopify`, `/webhooks/woocommerce/:shopId`. */
  readonly path: string;
  /** The order topics Relais acts on, as deliveries name them; any other topic is acknowledged and ignored. */
  readonly orderTopics: ReadonlySet<string>;
  /** Data-protection topics the platform requires an app to act on (src/orders/intake/compliance.ts); none for some. */
  readonly complianceTopics: ReadonlySet<string>;
  /** Sent when the merchant removes the app from the shop (src/shops/uninstall.ts); absent for a platform without one. */
  readonly uninstallTopic?: string;
  /** The topics `relais doctor --fix` subscribes a shop to, as the platform's API names them. */
  readonly subscribedTopics: readonly string[];
  receive(delivery: WebhookDelivery, shops: ShopRegistry): WebhookReceipt;
}

/** The platform's checkout rate endpoint: its request, its signature, its answer, around the neutral price. */
export interface CheckoutRatesEndpoint<P extends PlatformName, Parsed = unknown> {
  /** The route in Express syntax: `/checkout/shopify/:shopId/rates`. */
  readonly path: string;
  readonly schema: z.ZodType<Parsed>;
  /** The secret the request is signed with (base64 HMAC-SHA256 of the raw body, src/shops/platforms/checkout-signature.ts). */
  secretOf(shop: ShopOf<P>): string;
  readonly signatureHeader: string;
  /** A reason to refuse an authenticated request that is not meant for this shop. */
  mismatch(shop: ShopOf<P>, headers: IncomingHeaders): 'shop_domain_mismatch' | undefined;
  toRequest(parsed: Parsed): CheckoutRateRequest;
  answer(shop: ShopOf<P>, outcome: CheckoutRateOutcome, now: Date): { status: number; body: unknown };
}

/**
 * Why a verified event (of any topic: an order, an uninstall, a data-protection request) is not shown to be the
 * shop's, for the log line; undefined when it is the shop's. `orderId`: the payload's order id, when it has one.
 */
export type OwnershipCheck<P extends PlatformName = PlatformName> = (
  shop: ShopOf<P>,
  event: { topic: string; payload: unknown },
  orderId: string | undefined,
) => Promise<string | undefined>;

/** What a platform's clients (writer, weight filler, order lister, ownership check) are built with. */
export interface StoreDeps {
  redis: RedisClient;
  prefix: string;
  logger: Logger;
  /** Told each time a call waited for the shop's rate budget shared in Redis (a metric). */
  onRateBudgetWait?: (shopId: string, ms: number) => void;
}

/** Fills in the weights a platform leaves off its orders; undefined when the orders already carry them. */
export type WeightFiller = (order: StoreOrder) => Promise<StoreOrder>;

/** An order event as the job acts on it: the order body, completed from the shop where the webhook left parts out. */
export type CompletedOrderEvent =
  | { kind: 'order'; payload: unknown }
  /** The shop no longer has the order (deleted for good): it is over in the shop. */
  | { kind: 'gone' };

/**
 * Reads from the shop what an order webhook leaves out, before the order is normalised: a WooCommerce refund's
 * shipping lines, the order a deletion names only by id. Throws when the shop cannot be read (the job retries).
 */
export type OrderEventCompleter = (event: {
  topic: string;
  orderId: string;
  payload: unknown;
}) => Promise<CompletedOrderEvent>;

/** Which orders to read: those created or changed since this instant. */
export interface OrderWindow {
  updatedSince: Date;
}

export interface ShopOrderPage {
  /** Each the order as the shop's webhooks carry it (give it to normaliseOrder, or replay it as a shop event). */
  payloads: unknown[];
  /** Opaque: pass it back to page() for the next page; absent on the last one. */
  next?: string;
}

/** A shop's orders, page by page, in the platform's own paging (Shopify cursors, WooCommerce page numbers). */
export interface ShopOrderLister {
  page(window: OrderWindow, next?: string): Promise<ShopOrderPage>;
  /** One order in full, as a webhook would carry it; undefined when the shop has no such order. */
  order(orderId: string): Promise<unknown>;
}

export interface DoctorContext {
  /** RELAIS_PUBLIC_URL: without it, the webhook subscriptions cannot be checked. */
  publicUrl: string | undefined;
  /** Repair what can be repaired (webhooks, the carrier service). */
  fix: boolean;
  timeoutMs: number;
  logger: Logger;
}

export interface StorePlatform<P extends PlatformName = PlatformName> {
  readonly name: P;
  /** The platform as people name it: "Shopify". */
  readonly label: string;
  /** Where the shop is, for people (a report's heading): its myshopify domain, its site's URL. */
  whereIs(shop: ShopOf<P>): string;

  readonly webhooks: WebhookIntake;
  /** The platform's order payload as one StoreOrder, or the hold reason that says what is wrong with it. */
  normalise(payload: unknown, context: NormaliseContext): NormaliseResult;
  /** The order's own last-modified time in a payload, even one too broken to normalise; undefined when it carries none. */
  orderVersionOf(payload: unknown): string | undefined;
  /** Makes the check for deliveries whose signature does not show which shop they belong to (shops of one app share its secret). */
  ownershipCheck(deps: StoreDeps): OwnershipCheck<P>;

  /** When an order that is not cancelled ships, by the shop's policy. */
  eligibility(order: StoreOrder, shop: ShopOf<P>): Eligibility;
  /** The order's standing in the shop, in the platform's words, for a reconciliation finding. */
  describeStatus(order: StoreOrder): string;

  /** The write-back client; undefined when none can be built for the shop (nothing is written back). */
  createWriter(shop: ShopOf<P>, deps: StoreDeps): ShopWriter | undefined;
  /** Completes order events whose webhook bodies leave out what Relais reads; undefined when they carry all of it. */
  createEventCompleter(shop: ShopOf<P>, deps: StoreDeps): OrderEventCompleter | undefined;
  /** Reads the weights the platform's orders do not carry; undefined when they carry them. */
  createWeightFiller(shop: ShopOf<P>, deps: StoreDeps): WeightFiller | undefined;
  createOrderLister(shop: ShopOf<P>, deps: StoreDeps): ShopOrderLister;

  readonly checkoutRates: CheckoutRatesEndpoint<P>;

  /** The shop's own checks: credentials, currency, webhook subscriptions, and whatever else the platform needs. */
  doctor(shop: ShopOf<P>, context: DoctorContext): Promise<CheckResult[]>;
}
