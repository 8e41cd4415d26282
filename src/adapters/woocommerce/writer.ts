/**
 * What a WooCommerce order shows as its parcel moves:
 *  - on dispatch: hidden meta_data (`_relais_shipment_id`, `_relais_tracking_code`, `_relais_tracking_url`;
 *    the leading underscore keeps them out of the customer's view and the custom-fields box) and one
 *    customer note with the tracking link (WooCommerce e-mails a customer note to the customer; when the
 *    merchant chose not to notify customers, the same note is written private);
 *  - each delivery step: a private order note; a prepaid order delivered becomes `completed`;
 *  - delivered and cash collected: `completed` with `set_paid`, and a private note of the amount;
 *  - a problem (a refused cancellation): a private note.
 *
 * Every method reads the order (or its notes) first and writes only what is missing, so a retried job or
 * a duplicated webhook never adds a second note or a second PUT. Note texts are deterministic (step and
 * shipment id, never a time) because the note itself is the record of what was already written.
 * Each PUT makes WooCommerce send `order.updated` back to Relais; the intake ignores it for an order
 * already dispatched.
 */
import { describeDoorAmount } from '../../domain/door-amount.js';
import type { WooShopConfig } from './settings.js';
import type { DeliveryStep } from '../../domain/shipment-status.js';
import { silentLogger, type Logger } from '../../log.js';
import type { DispatchInfo, ShopOrderRef, ShopWriter } from '../../shops/platforms/writer.js';
import { createWooRest } from './rest.js';
import { type WooNoteView, type WooOrderView, type WooRest } from './rest-types.js';

export const META_SHIPMENT_ID = '_relais_shipment_id';
export const META_TRACKING_CODE = '_relais_tracking_code';
export const META_TRACKING_URL = '_relais_tracking_url';

/** The private note of each step written into the shop (the others are internal to the service). */
const STEP_TEXT: Partial<Record<DeliveryStep, string>> = {
  picked_up: 'picked up by the courier',
  in_transit: 'in transit',
  out_for_delivery: 'out for delivery',
  delivered: 'delivered',
  delivery_failed:
    'delivery failed: the courier could not deliver the parcel. The order is not marked paid; contact the customer to arrange a new attempt or a return',
  returned: 'returned to the merchant',
  cancelled: 'shipment cancelled',
};

/** Statuses in which the merchant closed the order themselves: Relais never overrides them with `completed`. */
const CLOSED_BY_MERCHANT: ReadonlySet<string> = new Set(['cancelled', 'refunded', 'failed', 'trash']);

export function stepNoteText(step: DeliveryStep, shipmentId: string): string | undefined {
  const text = STEP_TEXT[step];
  return text === undefined ? undefined : `Relais: ${text} (shipment ${shipmentId}).`;
}

export function cashNoteText(info: Pick<DispatchInfo, 'goods' | 'shipmentId' | 'door'>): string {
  const door = info.door ? `; ${describeDoorAmount(info.door)}` : '';
  return `Relais: cash collected for the goods: ${info.goods} XOF (shipment ${info.shipmentId}${door}).`;
}

export function problemNoteText(message: string): string {
  return `Relais: ${message}`;
}

export function trackingNoteText(order: Pick<ShopOrderRef, 'orderName'>, info: DispatchInfo): string {
  const parts = [`Your order ${order.orderName} is on its way with ${info.carrierName}.`];
  if (info.trackingCode) parts.push(`Tracking code: ${info.trackingCode}.`);
  if (info.publicTrackingUrl) parts.push(`Follow your parcel: ${info.publicTrackingUrl}`);
  // What the customer hands over: the goods and, when the customer pays it, the delivery and its fee.
  const atDoor = info.door?.atDoor ?? info.goods;
  if (info.cashOnDelivery && atDoor > 0) parts.push(`Please have ${atDoor} XOF ready for the courier.`);
  return parts.join(' ');
}

export class WooWriter implements ShopWriter {
  readonly #rest: Pick<WooRest, 'getOrder' | 'updateOrder' | 'listOrderNotes' | 'addOrderNote'>;
  readonly #logger: Logger;

  constructor(
    rest: Pick<WooRest, 'getOrder' | 'updateOrder' | 'listOrderNotes' | 'addOrderNote'>,
    logger: Logger = silentLogger,
  ) {
    this.#rest = rest;
    this.#logger = logger;
  }

  async recordDispatch(order: ShopOrderRef, info: DispatchInfo): Promise<void> {
    const current = await this.#rest.getOrder(order.orderId);
    const wanted: [string, string | undefined][] = [
      [META_SHIPMENT_ID, info.shipmentId],
      [META_TRACKING_CODE, info.trackingCode],
      [META_TRACKING_URL, info.publicTrackingUrl],
    ];
    const changed = wanted
      .filter(
        (entry): entry is [string, string] =>
          entry[1] !== undefined && entry[1] !== '' && metaValue(current, entry[0]) !== entry[1],
      )
      .map(([key, value]) => ({ key, value }));
    if (changed.length > 0) {
      await this.#rest.updateOrder(order.orderId, { meta_data: changed });
      this.#log(order).info({ keys: changed.map((c) => c.key) }, 'shipment reference written on the WooCommerce order');
    }

    // The link is what the customer needs; without a link or a code there is nothing to tell them yet.
    const marker = info.publicTrackingUrl ?? (info.trackingCode ? `Tracking code: ${info.trackingCode}.` : undefined);
    if (marker === undefined) return;
    const notes = await this.#rest.listOrderNotes(order.orderId);
    if (notes.some((note) => plainText(note.note).includes(marker))) return;
    await this.#rest.addOrderNote(order.orderId, trackingNoteText(order, info), info.notifyCustomer);
    this.#log(order).info({ customerNote: info.notifyCustomer }, 'tracking link noted on the WooCommerce order');
  }

  async recordStep(order: ShopOrderRef, step: DeliveryStep, _at: string, info: DispatchInfo): Promise<void> {
    const text = stepNoteText(step, info.shipmentId);
    if (text === undefined) return;
    await this.#privateNoteOnce(order, text);
    // A prepaid order is done once delivered: `completed` is WooCommerce's "fulfilled". A COD order is
    // completed by markPaid, together with the payment.
    if (step === 'delivered' && !info.cashOnDelivery) {
      const current = await this.#rest.getOrder(order.orderId);
      if (current.status !== 'completed' && !CLOSED_BY_MERCHANT.has(current.status)) {
        await this.#rest.updateOrder(order.orderId, { status: 'completed' });
        this.#log(order).info({ from: current.status }, 'prepaid WooCommerce order completed on delivery');
      }
    }
  }

  async markPaid(order: ShopOrderRef, info: DispatchInfo): Promise<void> {
    const current = await this.#rest.getOrder(order.orderId);
    if (CLOSED_BY_MERCHANT.has(current.status)) {
      // The merchant closed the order meanwhile (cancelled, refunded): say what happened, change nothing.
      await this.#privateNoteOnce(
        order,
        problemNoteText(
          `the courier delivered and collected ${info.goods} XOF (shipment ${info.shipmentId}), but the order is "${current.status}" in the shop, so its status was left unchanged.`,
        ),
      );
      return;
    }
    if (current.status !== 'completed') {
      // For a COD order `completed` is WooCommerce's "payment complete" status: it sets date_paid.
      await this.#rest.updateOrder(order.orderId, { status: 'completed', set_paid: true });
      this.#log(order).info({ from: current.status }, 'WooCommerce order completed and paid');
    }
    await this.#privateNoteOnce(order, cashNoteText(info));
  }

  async recordProblem(order: ShopOrderRef, message: string): Promise<void> {
    await this.#privateNoteOnce(order, problemNoteText(message));
  }

  async #privateNoteOnce(order: ShopOrderRef, text: string): Promise<void> {
    const notes = await this.#rest.listOrderNotes(order.orderId);
    if (hasNote(notes, text)) return;
    await this.#rest.addOrderNote(order.orderId, text, false);
  }

  #log(order: ShopOrderRef): Logger {
    return this.#logger.child({ shop: order.shopId, order: order.orderName, externalOrderId: order.externalOrderId });
  }
}

function metaValue(order: WooOrderView, key: string): unknown {
  return order.meta_data.find((entry) => entry.key === key)?.value;
}

function hasNote(notes: readonly WooNoteView[], text: string): boolean {
  const wanted = plainText(text);
  return notes.some((note) => plainText(note.note) === wanted);
}

/**
 * A note as written, whatever WordPress did to it on the way in or out (kses, entities, wpautop):
 * tags removed, the common entities decoded, white space collapsed.
 */
export function plainText(html: string): string {
  return html
    .replace(/<[^>]*>/g, ' ')
    .replace(/&#0*39;|&#x0*27;|&apos;/gi, "'")
    .replace(/&quot;/g, '"')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&#8217;/g, '\u2019')
    .replace(/&nbsp;/g, ' ')
    .replace(/&amp;/g, '&')
    .replace(/\s+/g, ' ')
    .trim();
}

/** The writer of one WooCommerce shop, with its own REST client (keys revealed only inside the client). */
export function createWooWriter(shop: WooShopConfig, deps: { logger: Logger; timeoutMs?: number }): WooWriter {
  const logger = deps.logger.child({ shop: shop.id });
  return new WooWriter(wooRestFor(shop, logger, deps.timeoutMs), logger);
}

export function wooRestFor(shop: WooShopConfig, logger: Logger, timeoutMs?: number): WooRest {
  return createWooRest({
    url: shop.woocommerce.url,
    consumerKey: shop.woocommerce.consumerKey,
    consumerSecret: shop.woocommerce.consumerSecret,
    logger,
    ...(timeoutMs === undefined ? {} : { timeoutMs }),
  });
}
