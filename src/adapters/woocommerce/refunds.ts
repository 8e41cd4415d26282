/**
 * What a WooCommerce order's refunds gave back of its shipping. The order body (webhook or REST) lists each refund
 * as `{id, reason, total}` only, and `shipping_total` stays what was charged after a refund: a shipping refund would
 * read as a goods refund and the courier would collect the shipping refunded less than the goods. The refunds
 * themselves (`GET /orders/{id}/refunds`) carry `shipping_lines`, so they are read, once per body and only when the
 * order has refunds, and each refund of the body gets its `shipping_lines` before the order is normalised
 * (normalise.ts then takes them off the shop's shipping). The completed body is what the ledger records, so a
 * replay of it reads nothing again.
 */
import type { WooRest } from './rest-types.js';

type RefundEntry = Record<string, unknown> & { id?: unknown };

/** The body's refunds still without what they refunded; empty when none, or all already read. */
function refundsToRead(payload: unknown): RefundEntry[] {
  if (typeof payload !== 'object' || payload === null) return [];
  const refunds = (payload as { refunds?: unknown }).refunds;
  if (!Array.isArray(refunds)) return [];
  return refunds.filter(
    (refund): refund is RefundEntry =>
      typeof refund === 'object' && refund !== null && !Array.isArray((refund as RefundEntry).shipping_lines),
  );
}

/**
 * The order body with each refund's `shipping_lines` as WooCommerce recorded them; the body itself when it has no
 * refund to read (no call is made). A refund the shop no longer lists is left as it was (read as goods).
 */
export async function withRefundedShipping(
  rest: Pick<WooRest, 'listOrderRefunds'>,
  orderId: string,
  payload: unknown,
): Promise<unknown> {
  if (refundsToRead(payload).length === 0) return payload;
  const read = new Map((await rest.listOrderRefunds(orderId)).map((refund) => [String(refund.id), refund]));
  const body = payload as { refunds: unknown[] };
  const refunds = body.refunds.map((entry) => {
    if (typeof entry !== 'object' || entry === null) return entry;
    const refund = read.get(String((entry as RefundEntry).id));
    return refund ? { ...entry, shipping_lines: refund.shipping_lines } : entry;
  });
  return { ...body, refunds };
}
