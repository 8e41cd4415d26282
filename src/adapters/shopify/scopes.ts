/**
 * The Admin API access scopes Relais's Shopify app asks for: exactly what the GraphQL documents it sends need
 * (admin-documents.ts, orders.ts, doctor.ts, carrier-service.ts), per Shopify's reference of each field. The
 * install asks for them (oauth.ts) and shopify.app.toml declares them; test/connect/shopify-app-toml.test.ts walks
 * every document and fails on a field this table does not name, so a new document cannot go out without its scope.
 */

/**
 * `Type.field` → the scope it needs, or null when it needs none beyond the app being installed. A write scope
 * grants its read scope (Shopify's rule), so only the stronger one is listed where both are used.
 */
export const SHOPIFY_FIELD_SCOPES: Readonly<Record<string, string | null>> = {
  'QueryRoot.order': 'read_orders',
  'QueryRoot.orders': 'read_orders',
  'QueryRoot.shop': null,
  // The app's own granted scopes (customer-data.ts): every app may read them.
  'QueryRoot.currentAppInstallation': null,
  // Subscriptions to orders/* topics need read_orders, which the order fields already ask for.
  'QueryRoot.webhookSubscriptions': null,
  'QueryRoot.carrierServices': 'read_shipping',
  // Fulfillment orders at the merchant's own locations: the ones Relais fulfils.
  'Order.fulfillmentOrders': 'read_merchant_managed_fulfillment_orders',
  'LineItem.product': 'read_products',
  'LineItem.variant': 'read_products',
  'Mutation.metafieldsSet': 'write_orders',
  'Mutation.tagsAdd': 'write_orders',
  'Mutation.orderMarkAsPaid': 'write_orders',
  'Mutation.orderUpdate': 'write_orders',
  'Mutation.fulfillmentCreate': 'write_merchant_managed_fulfillment_orders',
  'Mutation.fulfillmentEventCreate': 'write_fulfillments',
  'Mutation.carrierServiceCreate': 'write_shipping',
  'Mutation.carrierServiceUpdate': 'write_shipping',
  'Mutation.webhookSubscriptionCreate': null,
};

/** Whether `granted` covers `needed`: the same scope, or the write scope of a read one. */
export function scopeCovers(granted: readonly string[], needed: string): boolean {
  return granted.includes(needed) || (needed.startsWith('read_') && granted.includes(`write_${needed.slice(5)}`));
}

/** The smallest list of scopes covering the table (a read scope left out when its write scope is there), sorted. */
export function shopifyAccessScopes(): string[] {
  const all = [...new Set(Object.values(SHOPIFY_FIELD_SCOPES).filter((s): s is string => s !== null))];
  return all.filter((scope) => !(scope.startsWith('read_') && all.includes(`write_${scope.slice(5)}`))).sort();
}
