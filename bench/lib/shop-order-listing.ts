/**
 * The shop's side of `relais reconcile` at flash-sale volume: pages of the Admin API's `orders` query
 * (RelaisReconcileOrders, src/adapters/shopify/orders.ts) for the orders the bench posted, each the same
 * cash-on-delivery order as the webhook template (bench/lib/orders.ts), delivered and paid, as a shop shows
 * it after Relais's write-back. Built on demand from the order ids, so nothing per order is kept.
 */
import { z } from 'zod';

const variablesSchema = z.object({ first: z.number().int().positive(), after: z.string().nullish() });

const MONEY = (amount: string) => ({ shopMoney: { amount, currencyCode: 'XOF' } });
const ADDRESS = {
  firstName: 'Awa',
  lastName: 'Ndiaye',
  name: 'Awa Ndiaye',
  company: null,
  phone: '+221 77 123 45 67',
  address1: 'Villa 12, Sacré Coeur 3',
  address2: '',
  city: 'Dakar',
  province: 'Dakar',
  provinceCode: 'DK',
  zip: '12000',
  country: 'Senegal',
  countryCodeV2: 'SN',
  latitude: 14.7236,
  longitude: -17.4694,
};

function orderNode(id: number, at: string) {
  return {
    id: `gid://shopify/Order/${id}`,
    legacyResourceId: String(id),
    name: `#${id}`,
    createdAt: at,
    updatedAt: at,
    processedAt: at,
    cancelledAt: null,
    currencyCode: 'XOF',
    presentmentCurrencyCode: 'XOF',
    displayFinancialStatus: 'PAID',
    displayFulfillmentStatus: 'FULFILLED',
    paymentGatewayNames: ['Cash on Delivery (COD)'],
    phone: null,
    totalWeight: '600',
    currentTotalPriceSet: MONEY('15000.00'),
    totalPriceSet: MONEY('15000.00'),
    totalOutstandingSet: MONEY('0.00'),
    totalShippingPriceSet: MONEY('0.00'),
    shippingAddress: ADDRESS,
    billingAddress: ADDRESS,
  };
}

/** One page of the listing; the cursor is the index of the next order. */
export function orderListingPage(variables: Record<string, unknown>, orderIds: readonly number[], at: string) {
  const { first, after } = variablesSchema.parse(variables);
  const start = after ? Number(after) : 0;
  const ids = orderIds.slice(start, start + first);
  const next = start + ids.length;
  return {
    orders: {
      nodes: ids.map((id) => orderNode(id, at)),
      pageInfo: { hasNextPage: next < orderIds.length, endCursor: ids.length > 0 ? String(next) : null },
    },
  };
}
