/**
 * The shop registry: which shops Relais serves, how to reach them, where their parcels are picked up,
 * and each merchant's dispatch policy. It is a JSON file (RELAIS_SHOPS_FILE) validated with zod.
 *
 * Secrets are never written in the file: each one is a reference, `{ "env": "VAR_NAME" }` or
 * `{ "file": "/run/secrets/name" }`, resolved at load. Every problem in the file (schema errors,
 * missing variables, duplicate ids) is reported at once, with the path of the offending field.
 * See config/shops.example.json for a complete, commented example.
 */
import { readFileSync } from 'node:fs';
import { loadWireProfile, WireProfileError } from '../adapters/dispatch-api/profile.js';
import { z } from 'zod';
import { SHOP_ID_PATTERN } from '../domain/ids.js';
import { PLATFORM_SETTINGS, type PlatformName } from './platforms/settings.js';
import { lookupEnv, MAKE_A_TOKEN, MIN_TOKEN_LENGTH } from '../config/env.js';
import { Secret, secretRef, type SecretRef } from './secret.js';
import { isTimeZone, XOF_COUNTRIES } from './time-zones.js';
import { RelaisError } from '../domain/errors.js';

const coords = z.object({ lat: z.number().min(-90).max(90), lng: z.number().min(-180).max(180) });

const DEFAULT_COD_GATEWAYS = ['Cash on Delivery (COD)', 'cod', 'cash_on_delivery', 'Paiement à la livraison'];

/**
 * Delivery prices at checkout (src/checkout): what the Shopify carrier service and the WooCommerce rates
 * endpoint answer for this shop. The rate shown is what the customer pays at the door (src/checkout/checkout-rates.ts).
 *  - enabled: false makes both endpoints answer 404, so Shopify shows its backup rates and the WooCommerce
 *    plugin adds nothing.
 *  - serviceName: the rate's name the customer sees at checkout (Shopify `service_name`, WooCommerce label);
 *    also the name under which `relais doctor --fix` registers the Shopify carrier service.
 *  - serviceCode: Shopify `service_code` / WooCommerce rate id. Shopify requires it to be stable across
 *    requests: never put anything dynamic in it, and do not change it once merchants' shipping rules use it.
 *  - budgetMs: the whole answer (Redis, resolution, simulatePrice) is given within this time. Shopify's own limit
 *    drops to 3 s under load, so the default leaves 500 ms for the network between Shopify and Relais.
 *  - fallback: what to answer when the delivery service is slow or down. `{ mode: 'rate', amountXof }` shows a
 *    fixed price (flagged in the description as a flat rate); `{ mode: 'none' }` answers 503, so Shopify shows
 *    the shop's backup rates and WooCommerce shows its other methods. Never used for an address whose
 *    neighbourhood is unknown: that gets no rate at all.
 *  - cacheTtlSeconds: how long a price is kept in Redis per (pickup, destination neighbourhood, weight band).
 *    15 minutes by default, the time Shopify itself keeps an answer.
 *  - deliveryDays: when set, every rate carries min/max delivery dates this many days from now (Shopify
 *    `min_delivery_date` / `max_delivery_date`); the delivery service does not say, so only the merchant knows.
 *  - includeCodFee: when the payment method is unknown at checkout (always on Shopify: its rate request carries no
 *    payment gateway), include the service's cash-collection fee in the rate. Default true: the shops Relais
 *    serves are paid at the door for the most part, and a rate below what the courier collects is the complaint
 *    this setting exists for. A shop whose orders are mostly prepaid sets false. When the method is known
 *    (the WooCommerce plugin sends it), the shop's codGateways / depositGateways decide instead.
 *  - maxRateXof: a rate above this many francs is not offered (no rate, a warn log line, and
 *    relais_checkout_rates_withheld_total{reason="above_maximum"}). Unset: no bound.
 */
const checkoutRatesSchema = z
  .object({
    enabled: z.boolean().default(true),
    serviceName: z.string().trim().min(1).max(100).default('Relais — livraison'),
    serviceCode: z
      .string()
      .regex(/^[A-Za-z0-9_-]{1,64}$/, 'letters, digits, _ and - (stable: never dynamic)')
      .default('RELAIS_STANDARD'),
    budgetMs: z.number().int().min(100).max(9_000).default(2_500),
    fallback: z
      .discriminatedUnion('mode', [
        z.object({ mode: z.literal('rate'), amountXof: z.number().int().positive() }).strict(),
        z.object({ mode: z.literal('none') }).strict(),
      ])
      .default({ mode: 'none' }),
    cacheTtlSeconds: z.number().int().min(1).max(86_400).default(900),
    deliveryDays: z
      .object({ min: z.number().int().min(0).max(60), max: z.number().int().min(0).max(60) })
      .strict()
      .refine((d) => d.min <= d.max, 'deliveryDays.min must not exceed deliveryDays.max')
      .optional(),
    includeCodFee: z.boolean().default(true),
    maxRateXof: z.number().int().positive().optional(),
  })
  .strict()
  .refine((c) => c.maxRateXof === undefined || c.fallback.mode !== 'rate' || c.fallback.amountXof <= c.maxRateXof, {
    message: 'fallback.amountXof must not exceed maxRateXof',
    path: ['maxRateXof'],
  });

const policySchema = z
  .object({
    /** Shopify: cash-on-delivery orders are dispatched when created; prepaid ones once paid. */
    dispatchCashOnDeliveryAt: z.enum(['created', 'paid']).default('created'),
    /** WooCommerce statuses that mean "ship it" (never `on-hold`: an unpaid bank transfer waits there). */
    wooDispatchStatuses: z.array(z.string()).default(['processing']),
    /**
     * When the shipment is marked ready: `immediately`, the only choice. `on_shop_signal` (wait for a signal the
     * merchant gives in the shop) was accepted once but nothing read the signal, so those shipments stayed
     * unready for ever; it is refused until it is built end to end.
     */
    markReady: z
      .literal('immediately', {
        error:
          'only "immediately" is supported: "on_shop_signal" is not built (nothing reads a shop\'s ready signal, so its shipments would never be marked ready); remove the setting',
      })
      .default('immediately'),
    /**
     * Who pays the delivery at the door. `customer` (default): the service collects its delivery price and
     * collection fee from the customer, so the shipping the shop charged is taken out of what the courier
     * collects for the goods. `merchant`: the courier collects what the shop says is owed; the merchant settles
     * the delivery with the service. See src/domain/door-amount.ts and the README.
     */
    deliveryFeePaidBy: z.enum(['customer', 'merchant']).default('customer'),
    codGateways: z.array(z.string().min(1)).default(DEFAULT_COD_GATEWAYS),
    depositGateways: z.array(z.string().min(1)).default([]),
    businessAccountGateways: z.array(z.string().min(1)).default([]),
    /** The merchant's own words for neighbourhoods: "Sacre Coeur Pyrotechnie" → "Sacré-Cœur". */
    neighbourhoodAliases: z.record(z.string(), z.string()).default({}),
    /** Let Shopify e-mail the customer the tracking link when the fulfillment is created. */
    notifyCustomer: z.boolean().default(true),
    /** Dispatch calls per second for this shop, across every worker (the service's own limits are not shown). */
    dispatchCallsPerSecond: z.number().int().min(1).max(1000).default(20),
    /** Bound after which a shipment left unready is reported (minutes). */
    unreadyAlertMinutes: z.number().int().positive().default(30),
    /** Delivery prices at checkout; every field is described above checkoutRatesSchema. */
    checkoutRates: checkoutRatesSchema.default(checkoutRatesSchema.parse({})),
  })
  .strict();

const pickupSchema = z
  .object({
    neighbourhood: z.string().min(1),
    address: z.string().min(1),
    coords: coords.optional(),
    contactName: z.string().min(1),
    contactPhone: z.string().min(6),
  })
  .strict();

const dispatchSchema = z
  .object({
    apiKey: secretRef,
    baseUrl: z.string().url(),
    /** The public tracking host; the same as baseUrl when absent. */
    trackingUrl: z.string().url().optional(),
    /** The secret part of this shop's delivery-webhook URL (…/webhooks/dispatch/<shop>/<token>). */
    webhookToken: secretRef,
    /** When the service signs its webhooks: the signing secret. */
    webhookSigningSecret: secretRef.optional(),
    timeoutMs: z.number().int().positive().max(60_000).default(10_000),
    /**
     * The service's wire profile: a built-in name (config/dispatch-profiles/<name>.json) or a file path. It
     * holds every name the spec does not show (states, error codes, webhook signature); see README.
     */
    profile: z.string().min(1).default('default'),
    /** The carrier name the shop shows with the tracking link (Shopify's tracking company, the WooCommerce note). */
    carrierName: z.string().trim().min(1).max(100).default('Relais'),
  })
  .strict();

const baseShopSchema = z.object({
  id: z.string().regex(SHOP_ID_PATTERN, 'lowercase letters, digits and hyphens'),
  name: z.string().min(1),
  /** ISO country code of the delivery area: SN, CI, TG, BJ, ML, BF, NE. */
  country: z.enum(XOF_COUNTRIES),
  /** IANA time zone of the merchant's days on the dashboard; default the country's (src/shops/time-zones.ts). */
  timeZone: z.string().refine(isTimeZone, 'an IANA time zone, e.g. Africa/Dakar').optional(),
  dispatch: dispatchSchema,
  pickup: pickupSchema,
  policy: policySchema.default(policySchema.parse({})),
});

/**
 * One shop of each platform: the common fields, `platform`, and the platform's own settings under its name,
 * validated by the platform's schema (src/shops/platforms/settings.ts).
 */
const shopSchemas = (Object.keys(PLATFORM_SETTINGS) as PlatformName[]).map((platform) =>
  baseShopSchema.extend({ platform: z.literal(platform), [platform]: PLATFORM_SETTINGS[platform] }).strict(),
);

const registrySchema = z
  .object({
    shops: z.array(
      z.discriminatedUnion(
        'platform',
        shopSchemas as [(typeof shopSchemas)[number], ...(typeof shopSchemas)[number][]],
      ),
    ),
  })
  .strict();

type RawShopOf<P extends PlatformName> = z.output<typeof baseShopSchema> & { platform: P } & {
  [K in P]: z.output<(typeof PLATFORM_SETTINGS)[K]>;
};
type RawShop = { [P in PlatformName]: RawShopOf<P> }[PlatformName];

/** Replaces every SecretRef in T by a Secret. */
type Resolved<T> = T extends SecretRef
  ? Secret
  : T extends (infer U)[]
    ? Resolved<U>[]
    : T extends object
      ? { [K in keyof T]: Resolved<T[K]> }
      : T;

export type ShopConfig = Resolved<RawShop>;
/** A shop of one platform: its own settings are under `shop[platform]`. */
export type ShopOf<P extends PlatformName> = Extract<ShopConfig, { platform: P }>;
export type ShopPolicy = ShopConfig['policy'];

export class ShopRegistryError extends RelaisError {
  override readonly name = 'ShopRegistryError';
  constructor(readonly problems: string[]) {
    super({
      failure: 'permanent',
      message: `shop registry is invalid:\n${problems.map((p) => `  - ${p}`).join('\n')}`,
    });
  }
}

/**
 * A shop Relais knows but does not serve (a connected shop switched off, or whose app was uninstalled). Its data-
 * protection webhooks are still answered (Shopify sends shop/redact 48 hours after an uninstall), so its settings
 * are kept when they can be built: `shop` then has the webhook secret to verify them, other secrets possibly empty.
 */
export interface NotServedShop {
  id: string;
  /** Why it is not served, in words for an operator (a held order's reason, a refused webhook's message). */
  reason: string;
  shop?: ShopConfig;
}

export class ShopRegistry {
  readonly #byId = new Map<string, ShopConfig>();
  readonly #notServed = new Map<string, NotServedShop>();

  constructor(shops: ShopConfig[], notServed: NotServedShop[] = []) {
    for (const shop of shops) this.#byId.set(shop.id, shop);
    for (const shop of notServed) if (!this.#byId.has(shop.id)) this.#notServed.set(shop.id, shop);
  }

  get(id: string): ShopConfig | undefined {
    return this.#byId.get(id);
  }
  all(): ShopConfig[] {
    return [...this.#byId.values()];
  }
  notServed(id: string): NotServedShop | undefined {
    return this.#notServed.get(id);
  }
  allNotServed(): NotServedShop[] {
    return [...this.#notServed.values()];
  }
  /**
   * The registry as it is now, never to change: what an index over the shops is keyed by (a live registry,
   * src/shops/served-shops.ts, answers its current one).
   */
  snapshot(): ShopRegistry {
    return this;
  }
}

export type SecretSource = (ref: SecretRef) => string | undefined;

/** Secret references resolved from an environment and the files they name (stored ones are not: see shop-directory.ts). */
export function defaultSecretSourceFor(env: NodeJS.ProcessEnv): SecretSource {
  return (ref) => {
    if ('env' in ref) return lookupEnv(ref.env, env);
    if ('stored' in ref) return undefined;
    try {
      return readFileSync(ref.file, 'utf8').trim() || undefined;
    } catch {
      return undefined;
    }
  };
}

const defaultSecretSource: SecretSource = (ref) => defaultSecretSourceFor(process.env)(ref);

/** Validates a parsed registry document and resolves its secrets; throws ShopRegistryError listing every problem. */
export function buildShopRegistry(document: unknown, secrets: SecretSource = defaultSecretSource): ShopRegistry {
  const parsed = registrySchema.safeParse(document);
  if (!parsed.success) {
    throw new ShopRegistryError(parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`));
  }
  const problems: string[] = [];
  const seen = new Set<string>();
  const resolve = (value: unknown, path: string): unknown => {
    if (value && typeof value === 'object' && !Array.isArray(value)) {
      const keys = Object.keys(value);
      if (
        keys.length === 1 &&
        (keys[0] === 'env' || keys[0] === 'file' || keys[0] === 'stored') &&
        secretRef.safeParse(value).success
      ) {
        const ref = value as SecretRef;
        const found = secrets(ref);
        const where =
          'env' in ref
            ? `environment variable ${ref.env}`
            : 'file' in ref
              ? `file ${ref.file}`
              : `stored secret ${ref.stored}`;
        if (found === undefined) problems.push(`${path}: ${where} is not set`);
        return new Secret(found ?? '', where);
      }
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, resolve(v, path ? `${path}.${k}` : k)]));
    }
    if (Array.isArray(value)) return value.map((v, i) => resolve(v, `${path}.${i}`));
    return value;
  };
  // The schema is built from the platforms' list, so its output type is looser than the one it enforces.
  const shops = (parsed.data.shops as unknown as RawShop[]).map((shop, index) => {
    if (seen.has(shop.id)) problems.push(`shops.${index}.id: duplicate shop id "${shop.id}"`);
    seen.add(shop.id);
    return resolve(shop, `shops.${index}`) as ShopConfig;
  });
  for (const shop of shops) {
    try {
      loadWireProfile(shop.dispatch.profile);
    } catch (error) {
      if (!(error instanceof WireProfileError)) throw error;
      problems.push(...error.problems.map((p) => `shop ${shop.id}: dispatch.profile "${shop.dispatch.profile}": ${p}`));
    }
    if (shop.dispatch.apiKey.reveal().startsWith('pk_test_')) {
      problems.push(
        `shop ${shop.id}: dispatch.apiKey is a pk_test_ key. The dispatch service refuses sandbox keys (403 SANDBOX_KEY_NOT_SUPPORTED) and has no test keys; use a pk_live_ key, or the emulator (relais emulate dispatch) to try the flow.`,
      );
    }
  }
  if (problems.length > 0) throw new ShopRegistryError(problems);
  return new ShopRegistry(shops);
}

/** The registry file's parsed JSON; every problem reading it is a ShopRegistryError naming the file. */
export function readRegistryDocument(path: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new ShopRegistryError([`cannot read ${path}: ${(error as Error).message}`]);
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new ShopRegistryError([`${path} is not valid JSON: ${(error as Error).message}`]);
  }
}

/** The delivery webhook URL carries this token: it is the only thing that authenticates those webhooks. */
export function assertWebhookTokens(registry: ShopRegistry): ShopRegistry {
  const short = registry
    .all()
    .filter((shop) => shop.dispatch.webhookToken.reveal().length < MIN_TOKEN_LENGTH)
    .map(
      (shop) =>
        `shop ${shop.id}: dispatch.webhookToken (${shop.dispatch.webhookToken.source}) has ${shop.dispatch.webhookToken.reveal().length} characters, at least ${MIN_TOKEN_LENGTH} are required: ${MAKE_A_TOKEN}`,
    );
  if (short.length > 0) throw new ShopRegistryError(short);
  return registry;
}

export function loadShopRegistry(path: string, secrets?: SecretSource): ShopRegistry {
  return assertWebhookTokens(buildShopRegistry(readRegistryDocument(path), secrets));
}
