/**
 * external_order_id: the reference the dispatch service stores for us and lets us look shipments up by.
 *
 * Format: `<shopId>:<platform order id>`, e.g. `dakar-mode:5923711254`. The shop id comes from the
 * shop registry, so two shops sharing one dispatch organisation never collide, and the same shop order
 * always maps to the same reference (a retry finds the shipment instead of creating a second one).
 * It is reversible: parseExternalOrderId gives back the shop and its order.
 */
export const SHOP_ID_PATTERN = /^[a-z0-9][a-z0-9-]{0,47}$/;

export function externalOrderId(shopId: string, orderId: string): string {
  if (!SHOP_ID_PATTERN.test(shopId)) throw new Error(`invalid shop id "${shopId}"`);
  if (!/^[A-Za-z0-9_-]+$/.test(orderId)) throw new Error(`invalid order id "${orderId}"`);
  return `${shopId}:${orderId}`;
}

export function parseExternalOrderId(value: string): { shopId: string; orderId: string } | undefined {
  const at = value.indexOf(':');
  if (at <= 0) return undefined;
  const shopId = value.slice(0, at);
  const orderId = value.slice(at + 1);
  if (!SHOP_ID_PATTERN.test(shopId) || !/^[A-Za-z0-9_-]+$/.test(orderId)) return undefined;
  return { shopId, orderId };
}
