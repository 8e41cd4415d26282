/**
 * The holds catalogue: every reason the dispatch path and the shop-event job hold an order for, each with the one
 * message the merchant reads (relais held, the dashboard, the order's timeline). A code is what reconciliation, the
 * overview's holds by reason and the tests match on; the message says what happened and what to do.
 *
 * Codes made elsewhere, with their messages there: a shop's order that cannot be shipped as it stands
 * (src/shops/platforms/: malformed_order, currency_not_xof, no_phone, shop_payment_failed, shop_cancelled, ...), a place
 * not found or not priced (src/orders/dispatch/priced-dropoff.ts: neighbourhood_not_found, neighbourhood_not_priced), and
 * an order owing only shipping (src/domain/door-amount.ts: cod_only_shipping_outstanding).
 *
 * Messages may quote the customer's order and the service's words: they go to the ledger, never to the logs.
 */
import type { HoldReason } from './order.js';

/** What each message is built from. */
interface HoldDetails {
  /** A job for a shop that is switched off or uninstalled. */
  shop_not_served: { shopId: string; reason: string };
  /** A job for a shop no longer in the registry at all. */
  unknown_shop: { shopId: string };
  /** The order's data was redacted or never received. */
  no_order_data: Record<string, never>;
  /** Cash on delivery with nothing left to collect: never shipped with 0. */
  cod_nothing_to_collect: { orderName: string };
  /** The service answered with something the shop's wire profile cannot read. */
  dispatch_unreadable_answer: { operation: string; profile: string; error: string };
  /** The service shows the order's shipment as cancelled. */
  shipment_cancelled: { shipmentId: string; status: string };
  /** A shipment created but refused markReady. */
  shipment_not_ready: { shipmentId: string; why: string };
  /** A shipment carrying another amount than the goods owed: never put in front of a courier. */
  cod_amount_mismatch: { shipmentId: string; why: string };
  /** Every retry of the dispatch job failed (the service, or the shop when reading weights, was away). */
  dispatch_unavailable: { attempts: number; lastError: string };
  /** What a shop's webhook leaves out could not be read from the shop (keys refused). */
  shop_unreadable: { platform: string; orderId: string; topic: string; error: string };
}

/** A business refusal of the delivery service: `dispatch_` and the service's own refusal code, in snake case. */
export type RefusalHoldCode = `dispatch_${string}`;

/** The codes this catalogue writes a message for. */
export type HoldCode = keyof HoldDetails;

const unready = (shipmentId: string, why: string) =>
  `shipment ${shipmentId} was created but is not marked ready, so no courier will be offered it: ${why}.`;

const MESSAGES: { [C in HoldCode]: (details: HoldDetails[C]) => string } = {
  shop_not_served: ({ shopId, reason }) => `shop "${shopId}" is not served: ${reason}`,
  unknown_shop: ({ shopId }) => `shop "${shopId}" is no longer in the shop registry`,
  no_order_data: () => 'the order data is missing (redacted or never received); replay from the shop',
  cod_nothing_to_collect: ({ orderName }) =>
    `order ${orderName} is cash on delivery but nothing is left to collect; it was not shipped with 0`,
  dispatch_unreadable_answer: ({ operation, profile, error }) =>
    `the delivery service's answer to ${operation} could not be read with wire profile "${profile}": ${error}. Correct the profile (relais probe shows what the service sends), then replay the order.`,
  shipment_cancelled: ({ shipmentId, status }) =>
    `the delivery service shows shipment ${shipmentId} for this order as cancelled (${status}); no courier is coming. Check with the delivery service before shipping it again.`,
  shipment_not_ready: ({ shipmentId, why }) =>
    `${unready(shipmentId, why)} Replay the order to try markReady again, or mark it ready in the delivery service's console.`,
  cod_amount_mismatch: ({ shipmentId, why }) => unready(shipmentId, why),
  dispatch_unavailable: ({ attempts, lastError }) =>
    `the order could not be dispatched after ${attempts} attempts (last error: ${lastError}); replay it once the service is back`,
  shop_unreadable: ({ platform, orderId, topic, error }) =>
    `${platform} order #${orderId} is not shipped: Relais could not read what its ${topic} webhook leaves out (its refunds, or the order itself) from the shop: ${error}. Check the shop's API keys (relais doctor), then replay the order.`,
};

/** The hold for `code`, with its message. */
export function holdFor<C extends HoldCode>(code: C, details: HoldDetails[C]): HoldReason {
  return { code, message: MESSAGES[code](details) };
}

/** The delivery service refused an operation for a reason of its own (a DeliveryError that no retry can help). */
export function refusalHold(refusal: string, operation: string, error: string): HoldReason & { code: RefusalHoldCode } {
  return {
    code: `dispatch_${refusal.toLowerCase().replace(/[^a-z0-9]+/g, '_')}`,
    message: `the delivery service refused ${operation}: ${error}`,
  };
}

/**
 * The shop stopped the order in a way it can undo (a failed payment, a cancellation the merchant may restore):
 * the shop's own reason, and that nothing is to be done until the shop ships it.
 */
export function stoppedInShopHold(stopped: HoldReason): HoldReason {
  return {
    code: stopped.code,
    message: `${stopped.message} It ships by itself once the shop shows it as an order to ship; nothing to do until then.`,
  };
}
