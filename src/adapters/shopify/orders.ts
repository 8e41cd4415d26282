/**
 * Reading a Shopify shop's orders for reconciliation, through the Admin GraphQL API (2026-10).
 *
 *  - `orders(first:, after:, query: "updated_at:>='…'")`, paged with pageInfo.endCursor, default sort (ID), so
 *    an order updated while we page (by Relais's own write-back) keeps its place instead of moving to the end.
 *  - A page of 60 orders without their line items costs 2 + 60 × 15 = 902 points (requested: five money sets,
 *    the current shipping price and the tax on it among them, and two addresses), under the single-query limit
 *    of 1000; line items would multiply that, so they are read only for the orders that must be replayed
 *    (`order(id:)`, one at a time). (80 orders a page until the shipping tax was read: it must be, or a shop
 *    whose prices exclude tax would show every order as a cod_mismatch.)
 *  - Each GraphQL order is turned into the REST shape of an `orders/*` webhook body: that is what
 *    normaliseOrder reads and what a replayed shop event must carry, so a repaired order goes through exactly
 *    the path a webhook takes. The customer object is not read (its phone is a last fallback in normalise.ts;
 *    the shipping and billing phones come first).
 *
 * Throttling and retries are the Admin client's (admin-request.ts): THROTTLED waits by cost, 429/5xx backoff, then a
 * retryable ShopifyWriteError with retryAfterMs that the caller honours.
 */
import { z } from 'zod';
import type { ShopifyShopConfig } from './settings.js';
import type { OrderWindow, ShopOrderLister, ShopOrderPage } from '../../shops/platforms/platform.js';
import type { StoreDeps } from '../../shops/platforms/platform.js';
import { sharedBudgetOf, shopifyAdminClientFor, type ShopifyAdminClient } from './admin.js';
import { ShopifyWriteError } from './admin-errors.js';

/** Orders per page: see the cost note above. */
export const SHOPIFY_ORDER_PAGE_SIZE = 60;
/** Line items read for an order to replay (a parcel with more lines is rare; the cost stays near 320). */
const REPLAY_LINE_ITEMS = 100;

const ADDRESS_FIELDS =
  'firstName lastName name company phone address1 address2 city province provinceCode zip country countryCodeV2 latitude longitude';
const MONEY = 'shopMoney { amount currencyCode }';

const ORDER_FIELDS = `fragment RelaisReconcileOrder on Order {
  id
  legacyResourceId
  name
  createdAt
  updatedAt
  processedAt
  cancelledAt
  currencyCode
  presentmentCurrencyCode
  displayFinancialStatus
  displayFulfillmentStatus
  paymentGatewayNames
  phone
  totalWeight
  currentTotalPriceSet { ${MONEY} }
  totalPriceSet { ${MONEY} }
  totalOutstandingSet { ${MONEY} }
  currentShippingPriceSet { ${MONEY} }
  taxesIncluded
  shippingLine { taxLines { priceSet { ${MONEY} } } }
  shippingAddress { ${ADDRESS_FIELDS} }
  billingAddress { ${ADDRESS_FIELDS} }
}`;

/** The documents this module sends; tests validate each against the real Admin schema. */
export const ORDER_LIST_DOCUMENTS = {
  ordersPage: `query RelaisReconcileOrders($first: Int!, $after: String, $query: String) {
  orders(first: $first, after: $after, query: $query) {
    nodes { ...RelaisReconcileOrder }
    pageInfo { hasNextPage endCursor }
  }
}
${ORDER_FIELDS}`,
  orderForReplay: `query RelaisReconcileOrder($id: ID!, $lines: Int!) {
  order(id: $id) {
    ...RelaisReconcileOrder
    lineItems(first: $lines) { nodes { id name title quantity currentQuantity requiresShipping product { id } variant { id } } }
  }
}
${ORDER_FIELDS}`,
} as const;

// ---- what we read -----------------------------------------------------------------------------------

const text = z.string().nullish();
const moneyBag = z.object({ shopMoney: z.object({ amount: z.string(), currencyCode: z.string() }) }).nullish();
const address = z
  .object({
    firstName: text,
    lastName: text,
    name: text,
    company: text,
    phone: text,
    address1: text,
    address2: text,
    city: text,
    province: text,
    provinceCode: text,
    zip: text,
    country: text,
    countryCodeV2: text,
    latitude: z.number().nullish(),
    longitude: z.number().nullish(),
  })
  .nullish();
const lineItem = z.object({
  id: z.string(),
  name: text,
  title: text,
  quantity: z.number().int(),
  currentQuantity: z.number().int().nullish(),
  requiresShipping: z.boolean().nullish(),
  product: z.object({ id: z.string() }).nullish(),
  variant: z.object({ id: z.string() }).nullish(),
});

const orderNode = z.object({
  id: z.string(),
  legacyResourceId: z.string(),
  name: z.string(),
  createdAt: z.string(),
  updatedAt: z.string(),
  processedAt: text,
  cancelledAt: text,
  currencyCode: z.string(),
  presentmentCurrencyCode: text,
  displayFinancialStatus: text,
  displayFulfillmentStatus: text,
  paymentGatewayNames: z.array(z.string()),
  phone: text,
  totalWeight: z.union([z.string(), z.number()]).nullish(),
  currentTotalPriceSet: moneyBag,
  totalPriceSet: moneyBag,
  totalOutstandingSet: moneyBag,
  currentShippingPriceSet: moneyBag,
  taxesIncluded: z.boolean().nullish(),
  shippingLine: z.object({ taxLines: z.array(z.object({ priceSet: moneyBag })) }).nullish(),
  shippingAddress: address,
  billingAddress: address,
  lineItems: z.object({ nodes: z.array(lineItem) }).optional(),
});
type OrderNode = z.infer<typeof orderNode>;

const ordersPageSchema = z.object({
  orders: z.object({
    nodes: z.array(orderNode),
    pageInfo: z.object({ hasNextPage: z.boolean(), endCursor: z.string().nullable() }),
  }),
});
const orderSchema = z.object({ order: orderNode.nullable() });

// ---- GraphQL → the REST webhook body -----------------------------------------------------------------

/** REST `fulfillment_status`: null for unfulfilled, `partial`, `fulfilled`, `restocked`; others lower-cased. */
function restFulfillmentStatus(display: string | null | undefined): string | null {
  switch (display) {
    case undefined:
    case null:
    case 'UNFULFILLED':
      return null;
    case 'PARTIALLY_FULFILLED':
      return 'partial';
    default:
      return display.toLowerCase();
  }
}

function restAddress(a: z.infer<typeof address>): Record<string, unknown> | null {
  if (!a) return null;
  return {
    first_name: a.firstName ?? null,
    last_name: a.lastName ?? null,
    name: a.name ?? null,
    company: a.company ?? null,
    phone: a.phone ?? null,
    address1: a.address1 ?? null,
    address2: a.address2 ?? null,
    city: a.city ?? null,
    province: a.province ?? null,
    province_code: a.provinceCode ?? null,
    zip: a.zip ?? null,
    country: a.country ?? null,
    country_code: a.countryCodeV2 ?? null,
    latitude: a.latitude ?? null,
    longitude: a.longitude ?? null,
  };
}

function restMoneyBag(bag: z.infer<typeof moneyBag>): Record<string, unknown> | null {
  return bag ? { shop_money: { amount: bag.shopMoney.amount, currency_code: bag.shopMoney.currencyCode } } : null;
}

const numericOfGid = (gid: string | undefined): string | null =>
  gid === undefined ? null : (/\/(\d+)$/.exec(gid)?.[1] ?? null);

/**
 * The REST `Order` body (what `orders/*` webhooks carry, as far as src/adapters/shopify/payload.ts reads it)
 * for a GraphQL order. Ids stay strings of digits: a JSON number could not hold every Shopify id exactly.
 */
export function restOrderOf(node: OrderNode): Record<string, unknown> {
  const weight = node.totalWeight === null || node.totalWeight === undefined ? null : Number(node.totalWeight);
  return {
    id: node.legacyResourceId,
    admin_graphql_api_id: node.id,
    name: node.name,
    currency: node.currencyCode,
    presentment_currency: node.presentmentCurrencyCode ?? null,
    current_total_price: node.currentTotalPriceSet?.shopMoney.amount ?? null,
    total_price: node.totalPriceSet?.shopMoney.amount ?? null,
    total_outstanding: node.totalOutstandingSet?.shopMoney.amount ?? null,
    current_total_price_set: restMoneyBag(node.currentTotalPriceSet),
    total_price_set: restMoneyBag(node.totalPriceSet),
    current_shipping_price_set: restMoneyBag(node.currentShippingPriceSet),
    ...shippingTaxOf(node),
    financial_status: node.displayFinancialStatus ? node.displayFinancialStatus.toLowerCase() : null,
    fulfillment_status: restFulfillmentStatus(node.displayFulfillmentStatus),
    cancelled_at: node.cancelledAt ?? null,
    gateway: node.paymentGatewayNames[0] ?? null,
    payment_gateway_names: node.paymentGatewayNames,
    phone: node.phone ?? null,
    shipping_address: restAddress(node.shippingAddress),
    billing_address: restAddress(node.billingAddress),
    total_weight: weight !== null && Number.isFinite(weight) ? weight : null,
    ...(node.lineItems
      ? {
          line_items: node.lineItems.nodes.map((line) => ({
            id: numericOfGid(line.id),
            name: line.name ?? null,
            title: line.title ?? null,
            quantity: line.quantity,
            current_quantity: line.currentQuantity ?? null,
            requires_shipping: line.requiresShipping ?? null,
            product_id: numericOfGid(line.product?.id),
            variant_id: numericOfGid(line.variant?.id),
          })),
        }
      : {}),
    created_at: node.createdAt,
    updated_at: node.updatedAt,
    processed_at: node.processedAt ?? null,
  };
}

/**
 * Whether prices include tax, and the tax on the shipping: with prices excluding tax it is part of the shop's
 * shipping (src/adapters/shopify/shipping-owed.ts), as in a webhook body.
 */
function shippingTaxOf(node: OrderNode): Record<string, unknown> {
  if (node.taxesIncluded === undefined || node.taxesIncluded === null) return {};
  return {
    taxes_included: node.taxesIncluded,
    shipping_lines: node.shippingLine
      ? [{ tax_lines: node.shippingLine.taxLines.map((tax) => ({ price_set: restMoneyBag(tax.priceSet) })) }]
      : [],
  };
}

/** Shopify search syntax for the window: quoted instants, `>=` since (inclusive). */
export function windowSearch(window: OrderWindow): string {
  return `updated_at:>='${window.updatedSince.toISOString()}'`;
}

// ---- the lister --------------------------------------------------------------------------------------

export class ShopifyOrderLister implements ShopOrderLister {
  constructor(
    private readonly admin: Pick<ShopifyAdminClient, 'query'>,
    private readonly pageSize: number = SHOPIFY_ORDER_PAGE_SIZE,
  ) {}

  async page(window: OrderWindow, next?: string): Promise<ShopOrderPage> {
    const data = await this.admin.query(
      ORDER_LIST_DOCUMENTS.ordersPage,
      { first: this.pageSize, after: next ?? null, query: windowSearch(window) },
      'RelaisReconcileOrders',
    );
    const parsed = ordersPageSchema.safeParse(data);
    if (!parsed.success) throw unexpected('RelaisReconcileOrders', parsed.error);
    const { nodes, pageInfo } = parsed.data.orders;
    const cursor = pageInfo.hasNextPage && pageInfo.endCursor ? pageInfo.endCursor : undefined;
    return { payloads: nodes.map(restOrderOf), ...(cursor === undefined ? {} : { next: cursor }) };
  }

  async order(orderId: string): Promise<unknown> {
    if (!/^\d+$/.test(orderId)) throw new TypeError(`orderId must be a numeric Shopify id, got "${orderId}"`);
    const data = await this.admin.query(
      ORDER_LIST_DOCUMENTS.orderForReplay,
      { id: `gid://shopify/Order/${orderId}`, lines: REPLAY_LINE_ITEMS },
      'RelaisReconcileOrder',
    );
    const parsed = orderSchema.safeParse(data);
    if (!parsed.success) throw unexpected('RelaisReconcileOrder', parsed.error);
    return parsed.data.order ? restOrderOf(parsed.data.order) : undefined;
  }
}

function unexpected(operation: string, error: z.ZodError): ShopifyWriteError {
  return new ShopifyWriteError({
    operation,
    message: `${operation}: unexpected answer from Shopify (${z.prettifyError(error)})`,
    retryable: false,
  });
}

/** The lister of a Shopify shop of the registry; in-process waits are longer than the writer's, nothing waits on a queue here. */
export function createShopifyOrderLister(
  shop: ShopifyShopConfig,
  deps: Pick<StoreDeps, 'logger'> & Partial<StoreDeps>,
): ShopifyOrderLister {
  const admin = shopifyAdminClientFor(
    shop,
    {
      logger: deps.logger.child({ shop: shop.id, component: 'shopify-orders' }),
      maxAttempts: 6,
      maxWaitMs: 20_000,
    },
    sharedBudgetOf(deps),
  );
  return new ShopifyOrderLister(admin);
}
