/**
 * The WooCommerce rates endpoint's JSON, designed for plugins/woocommerce-relais-rates (documented in its
 * README and in the project README, "Delivery prices at checkout").
 *
 * Request (POST /checkout/woocommerce/:shopId/rates, header X-Relais-Signature: base64 HMAC-SHA256 of the raw
 * body with the shop's WooCommerce webhook secret):
 *   {
 *     "destination": { "country": "CI", "state": "", "postcode": "", "city": "Abidjan",
 *                      "address_1": "Rue des Jardins", "address_2": "Cocody Danga" },
 *     "items": [ { "weight_kg": 0.4, "quantity": 2 } ],      // or: "total_weight_kg": 0.8
 *     "currency": "XOF",
 *     "payment_method": "cod"                                 // optional: the customer's chosen gateway id
 *   }
 * `payment_method`, when sent, decides whether the cash-collection fee is in the rate (the shop's codGateways and
 * depositGateways collect at the door); without it, the shop's checkoutRates.includeCodFee decides.
 * The destination keys are those of a WooCommerce shipping package (`$package['destination']`, where `address`
 * is a synonym of `address_1`). Weights are in kg: the plugin converts from the store's unit with wc_get_weight.
 * `total_weight_kg`, when given, wins over `items`; with neither, the parcel is priced as a standard one.
 *
 * Response 200: { "rates": [ { "id": "RELAIS_STANDARD", "label": "Relais — livraison", "cost": 2300,
 *                              "currency": "XOF", "description": "Livraison à Cocody" } ] }   (cost: whole XOF)
 *           or  { "rates": [] }  when Relais cannot price this address (unknown neighbourhood, another country).
 * Response 503 { "rates": [] } when the delivery service is slow or down and the shop has no flat fallback;
 *          401 bad signature, 400 malformed body, 404 unknown shop or checkout prices disabled.
 */
import { z } from 'zod';
import type { ShopConfig } from '../../shops/shops.js';
import type { CheckoutRateOutcome, CheckoutRateRequest } from '../../checkout/checkout-rates.js';
import { noRateAnswer, rateDescription } from '../../shops/platforms/checkout-presentation.js';
import { RELAIS_SIGNATURE_HEADER } from '../../shops/platforms/checkout-signature.js';
import type { CheckoutRatesEndpoint } from '../../shops/platforms/platform.js';

const text = z.string().max(1_000).nullish();

export const wooRateRequestSchema = z
  .object({
    destination: z
      .object({
        country: text,
        state: text,
        postcode: text,
        city: text,
        address: text,
        address_1: text,
        address_2: text,
        company: text,
      })
      .loose(),
    items: z
      .array(
        z
          .object({
            weight_kg: z.number().min(0).max(100_000).nullish(),
            quantity: z.number().int().min(0).max(1_000_000),
          })
          .loose(),
      )
      .max(5_000)
      .nullish(),
    total_weight_kg: z.number().min(0).max(100_000).nullish(),
    currency: text,
    payment_method: text,
  })
  .loose();

export type WooRateRequest = z.output<typeof wooRateRequestSchema>;

export interface WooRate {
  id: string;
  label: string;
  /** Whole XOF francs (WooCommerce prices carry no sub-unit conversion). */
  cost: number;
  currency: 'XOF';
  description: string;
}

export function fromWooRateRequest(request: WooRateRequest): CheckoutRateRequest {
  const d = request.destination;
  const kg =
    request.total_weight_kg ??
    (request.items ?? []).reduce((sum, item) => sum + (item.weight_kg ?? 0) * item.quantity, 0);
  return {
    destination: {
      ...(d.country ? { country: d.country } : {}),
      fields: {
        address1: d.address_1 || d.address || undefined,
        address2: d.address_2 ?? undefined,
        city: d.city ?? undefined,
        province: d.state ?? undefined,
        zip: d.postcode ?? undefined,
        company: d.company ?? undefined,
      },
    },
    weightGrams: Math.round(kg * 1000),
    ...(request.payment_method?.trim() ? { paymentMethod: request.payment_method.trim() } : {}),
  };
}

export function toWooAnswer(
  shop: ShopConfig,
  outcome: CheckoutRateOutcome,
): { status: number; body: { rates: WooRate[] } | { error: string } } {
  const policy = shop.policy.checkoutRates;
  switch (outcome.kind) {
    case 'rate':
      return {
        status: 200,
        body: {
          rates: [
            {
              id: policy.serviceCode,
              label: policy.serviceName,
              cost: outcome.amountXof,
              currency: 'XOF',
              description: rateDescription(outcome),
            },
          ],
        },
      };
    default:
      return noRateAnswer(outcome);
  }
}

/** The checkout plugin's endpoint, mounted by src/checkout/routes.ts. */
export const wooCheckoutRates: CheckoutRatesEndpoint<'woocommerce', WooRateRequest> = {
  path: '/checkout/woocommerce/:shopId/rates',
  schema: wooRateRequestSchema,
  // The plugin's own secret when the registry gives one: a leaked plugin setting then cannot forge order webhooks.
  secretOf: (shop) => (shop.woocommerce.checkoutSecret ?? shop.woocommerce.webhookSecret).reveal(),
  signatureHeader: RELAIS_SIGNATURE_HEADER,
  // The URL names the shop and the secret is the shop's own: nothing else to match.
  mismatch: () => undefined,
  toRequest: fromWooRateRequest,
  answer: (shop, outcome) => toWooAnswer(shop, outcome),
};
