/**
 * Shopify's CarrierService rate request and response (Admin GraphQL 2026-10, type DeliveryCarrierService, whose
 * description carries the official examples; copied to test/fixtures/shopify/carrier-service-*.json).
 *
 * Request: `{ rate: { origin, destination, items[], currency, locale, ... } }`. For API-created carrier services
 * Shopify sends only address1, address2, city, zip, province and country of each address; its published
 * example spells the postcode `postal_code`, so both are read. Coordinates are read when present (numbers, or
 * strings in older payloads). Items carry `grams` per unit and a `quantity`.
 *
 * Response: `{ rates: [{ service_name, service_code, total_price, description, currency, min/max_delivery_date }] }`,
 * `total_price` in sub-units: XOF has none, and Shopify still wants the amount × 100 (toShopifySubunits).
 */
import { z } from 'zod';
import type { ShopConfig } from '../../shops/shops.js';
import { toShopifySubunits } from '../../domain/money.js';
import type { CheckoutRateOutcome, CheckoutRateRequest } from '../../checkout/checkout-rates.js';
import { deliveryWindow, noRateAnswer, rateDescription } from '../../shops/platforms/checkout-presentation.js';
import { SHOPIFY_HMAC_HEADER, SHOPIFY_SHOP_DOMAIN_HEADER } from '../../shops/platforms/checkout-signature.js';
import type { CheckoutRatesEndpoint } from '../../shops/platforms/platform.js';

const text = z.string().max(1_000).nullish();
const coordinate = z.union([z.number(), z.string().max(40)]).nullish();

const shopifyAddressSchema = z
  .object({
    country: text,
    postal_code: text,
    zip: text,
    province: text,
    city: text,
    address1: text,
    address2: text,
    address3: text,
    company_name: text,
    latitude: coordinate,
    longitude: coordinate,
  })
  .loose();

const shopifyItemSchema = z
  .object({
    quantity: z.number().int().min(0).max(1_000_000),
    grams: z.number().min(0).max(100_000_000).nullish(),
    requires_shipping: z.boolean().nullish(),
  })
  .loose();

export const shopifyRateRequestSchema = z
  .object({
    rate: z
      .object({
        origin: shopifyAddressSchema.nullish(),
        destination: shopifyAddressSchema,
        items: z.array(shopifyItemSchema).max(5_000),
        currency: text,
        locale: text,
      })
      .loose(),
  })
  .loose();

export type ShopifyRateRequest = z.output<typeof shopifyRateRequestSchema>;

export interface ShopifyRate {
  service_name: string;
  service_code: string;
  /** Sub-units as a decimal string: 2 300 XOF is "230000". */
  total_price: string;
  description: string;
  currency: 'XOF';
  min_delivery_date?: string;
  max_delivery_date?: string;
}

export interface ShopifyRateResponse {
  rates: ShopifyRate[];
}

export function fromShopifyRateRequest(request: ShopifyRateRequest): CheckoutRateRequest {
  const d = request.rate.destination;
  const weightGrams = request.rate.items
    .filter((item) => item.requires_shipping !== false)
    .reduce((sum, item) => sum + (item.grams ?? 0) * item.quantity, 0);
  const coords = coordinatesOf(d.latitude, d.longitude);
  return {
    destination: {
      ...(d.country ? { country: d.country } : {}),
      fields: {
        address1: d.address1 ?? undefined,
        // address3 only comes from ActiveShipping carriers; where it does, it is one more line of the address.
        address2: [d.address2, d.address3].filter((v): v is string => Boolean(v?.trim())).join(', ') || undefined,
        city: d.city ?? undefined,
        province: d.province ?? undefined,
        zip: d.zip || d.postal_code || undefined,
        company: d.company_name ?? undefined,
      },
      ...(coords ? { coords } : {}),
    },
    weightGrams: Math.round(weightGrams),
  };
}

/** What Shopify gets: a status and a body. A 5xx makes Shopify show the shop's backup rates. */
export function toShopifyAnswer(
  shop: ShopConfig,
  outcome: CheckoutRateOutcome,
  now: Date,
): { status: number; body: ShopifyRateResponse | { error: string } } {
  const policy = shop.policy.checkoutRates;
  switch (outcome.kind) {
    case 'rate': {
      const rate: ShopifyRate = {
        service_name: policy.serviceName,
        service_code: policy.serviceCode,
        total_price: toShopifySubunits(outcome.amountXof),
        description: rateDescription(outcome),
        currency: 'XOF',
      };
      const window = deliveryWindow(policy.deliveryDays, now);
      if (window) {
        rate.min_delivery_date = window.min;
        rate.max_delivery_date = window.max;
      }
      return { status: 200, body: { rates: [rate] } };
    }
    default:
      return noRateAnswer(outcome);
  }
}

export function coordinatesOf(lat: unknown, lng: unknown): { lat: number; lng: number } | undefined {
  const la = typeof lat === 'string' ? Number(lat) : lat;
  const lo = typeof lng === 'string' ? Number(lng) : lng;
  if (typeof la !== 'number' || typeof lo !== 'number' || !Number.isFinite(la) || !Number.isFinite(lo))
    return undefined;
  if (Math.abs(la) > 90 || Math.abs(lo) > 180 || (la === 0 && lo === 0)) return undefined;
  return { lat: la, lng: lo };
}

/** Where Shopify asks for rates (`relais doctor --fix` registers it as the shop's carrier service: carrier-service.ts). */
export const SHOPIFY_RATES_PATH = '/checkout/shopify/:shopId/rates';

/** The carrier-service callback, mounted by src/checkout/routes.ts and signed with the app's client secret. */
export const shopifyCheckoutRates: CheckoutRatesEndpoint<'shopify', ShopifyRateRequest> = {
  path: SHOPIFY_RATES_PATH,
  schema: shopifyRateRequestSchema,
  secretOf: (shop) => shop.shopify.webhookSecret.reveal(),
  signatureHeader: SHOPIFY_HMAC_HEADER,
  // The client secret is the app's, shared by every shop that installed it: a request signed for another shop
  // would pass the HMAC, so the shop domain Shopify names must be this one (when it names one).
  mismatch: (shop, headers) => {
    const value = headers[SHOPIFY_SHOP_DOMAIN_HEADER];
    const domain = (Array.isArray(value) ? value[0] : value)?.toLowerCase();
    return domain !== undefined && domain !== shop.shopify.domain ? 'shop_domain_mismatch' : undefined;
  },
  toRequest: fromShopifyRateRequest,
  answer: toShopifyAnswer,
};
