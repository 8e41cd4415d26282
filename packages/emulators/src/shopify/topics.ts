/**
 * Webhook topics come in two spellings: the GraphQL enum (ORDERS_PARTIALLY_FULFILLED) used to subscribe,
 * and the REST form (orders/partially_fulfilled) sent in X-Shopify-Topic. The split point is not regular
 * (FULFILLMENT_EVENTS_CREATE is fulfillment_events/create), so the topics the emulator emits are listed.
 */
const KNOWN: Record<string, string> = {
  APP_UNINSTALLED: 'app/uninstalled',
  ORDERS_CREATE: 'orders/create',
  ORDERS_UPDATED: 'orders/updated',
  ORDERS_PAID: 'orders/paid',
  ORDERS_CANCELLED: 'orders/cancelled',
  ORDERS_FULFILLED: 'orders/fulfilled',
  ORDERS_PARTIALLY_FULFILLED: 'orders/partially_fulfilled',
  ORDERS_DELETE: 'orders/delete',
  ORDERS_EDITED: 'orders/edited',
  FULFILLMENTS_CREATE: 'fulfillments/create',
  FULFILLMENTS_UPDATE: 'fulfillments/update',
  FULFILLMENT_EVENTS_CREATE: 'fulfillment_events/create',
  FULFILLMENT_EVENTS_DELETE: 'fulfillment_events/delete',
};

const BY_REST = new Map(Object.entries(KNOWN).map(([graphql, rest]) => [rest, graphql]));

/** ORDERS_PAID → orders/paid. Unknown topics split at the first underscore, which fits most of Shopify's. */
export function restTopic(topic: string): string {
  if (topic.includes('/')) return topic;
  const known = KNOWN[topic];
  if (known) return known;
  const lower = topic.toLowerCase();
  const split = lower.indexOf('_');
  return split < 0 ? lower : `${lower.slice(0, split)}/${lower.slice(split + 1)}`;
}

/** orders/paid → ORDERS_PAID; an enum value is returned unchanged. */
export function graphqlTopic(topic: string): string {
  if (!topic.includes('/')) return topic;
  return BY_REST.get(topic) ?? topic.replace('/', '_').toUpperCase();
}
