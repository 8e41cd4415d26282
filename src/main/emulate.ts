/**
 * `relais emulate dispatch|shopify|woocommerce`: the local stand-ins for the remote services, as
 * processes. The dispatch service has no test keys, so its emulator is the only safe place for a
 * merchant to try the flow; the shop emulators let the whole pipeline run with no shop at all.
 *
 * Keys: from a config file that references environment variables, or generated for this run and
 * printed once on stdout (they open nothing but this local emulator).
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { rawEnvironment } from '../config/env.js';
import { defaultWireProfile, loadWireProfile } from '../adapters/dispatch-api/profile.js';
import type { Logger } from '../log.js';
import type { DispatchEmulatorOptions } from '@relais/emulators/dispatch';
import { loadDispatchEmulator, loadShopifyEmulator, loadWooEmulator } from './emulators.js';

export interface EmulateOptions {
  config?: string;
  host: string;
  port: number;
  trackingPort?: number;
  realtime?: boolean;
  stepMs?: number;
  /** dispatch: the wire profile to speak (file or built-in name); overrides the config file's. */
  profile?: string;
  /** dispatch: the service's own priced places (`country,name,band,lat,lon,covers`); default: from the gazetteer. */
  zoneFile?: string;
  /** woocommerce: products created in every shop, each "name:price[:weight[:sku]]" (--product, repeatable). */
  products?: string[];
}

export interface RunningEmulator {
  describe: string;
  close(): Promise<void>;
}

export async function emulateDispatch(
  options: EmulateOptions,
  logger: Logger,
  print: (line: string) => void,
): Promise<RunningEmulator> {
  const { loadEmulatorConfig, startDispatchEmulator } = await loadDispatchEmulator();
  let config: DispatchEmulatorOptions;
  let generatedKey: string | undefined;
  if (options.config) {
    config = await loadEmulatorConfig(options.config, rawEnvironment());
  } else {
    generatedKey = rawEnvironment().DISPATCH_EMULATOR_API_KEY ?? `pk_live_${randomBytes(16).toString('hex')}`;
    config = { organisations: [{ id: 'org_demo', name: 'Demo organisation', apiKeys: [generatedKey] }] };
  }
  const profile =
    options.profile !== undefined ? loadWireProfile(options.profile) : (config.profile ?? defaultWireProfile());
  const emulator = await startDispatchEmulator({
    ...config,
    profile,
    host: options.host,
    port: options.port,
    ...(options.trackingPort !== undefined ? { trackingPort: options.trackingPort } : {}),
    clock: options.realtime === false ? 'manual' : 'realtime',
    courierStepMs: options.stepMs ?? config.courierStepMs ?? 5_000,
    ...(options.zoneFile !== undefined ? { zoneFile: options.zoneFile } : {}),
    logger,
  });
  print(`dispatch emulator on ${emulator.baseUrl} (public tracking on ${emulator.trackingUrl})`);
  print(`speaking wire profile "${profile.name}"${options.profile !== undefined ? ` from ${options.profile}` : ''}`);
  if (options.zoneFile !== undefined) print(`pricing only the places listed in ${options.zoneFile}`);
  if (generatedKey) print(`organisation org_demo, API key for this run: ${generatedKey}`);
  return { describe: emulator.baseUrl, close: () => emulator.close() };
}

const shopifyConfig = z.object({
  shops: z
    .array(
      z.object({
        domain: z.string(),
        accessTokenEnv: z.string(),
        clientSecretEnv: z.string(),
        currency: z.string().optional(),
        /** false: the app lacks protected customer data access (names, addresses, phones come as null). */
        protectedCustomerData: z.boolean().optional(),
      }),
    )
    .min(1),
});

export async function emulateShopify(
  options: EmulateOptions,
  logger: Logger,
  print: (line: string) => void,
): Promise<RunningEmulator> {
  const { startShopifyEmulator } = await loadShopifyEmulator();
  const env = rawEnvironment();
  const shops = options.config
    ? shopifyConfig.parse(JSON.parse(readFileSync(options.config, 'utf8'))).shops.map((s) => ({
        domain: s.domain,
        accessToken: required(env, s.accessTokenEnv),
        clientSecret: required(env, s.clientSecretEnv),
        currency: s.currency,
        ...(s.protectedCustomerData === undefined ? {} : { protectedCustomerData: s.protectedCustomerData }),
      }))
    : [
        {
          domain: 'demo-shop.myshopify.com',
          accessToken: `shpat_${randomBytes(16).toString('hex')}`,
          clientSecret: randomBytes(16).toString('hex'),
        },
      ];
  const emulator = await startShopifyEmulator({ shops, host: options.host, port: options.port, logger });
  print(`Shopify emulator on ${emulator.url}`);
  for (const shop of shops) {
    print(`  shop ${shop.domain}: Admin API at ${emulator.adminUrl(shop.domain)}`);
    if (!options.config) print(`  access token for this run: ${shop.accessToken}; client secret: ${shop.clientSecret}`);
  }
  return { describe: emulator.url, close: () => emulator.close() };
}

const productSchema = z
  .object({
    name: z.string().min(1),
    price: z.string().optional(),
    weight: z.string().optional(),
    sku: z.string().optional(),
  })
  .strict();
type EmulatedProductInput = z.infer<typeof productSchema>;

const wooConfig = z.object({
  shops: z
    .array(
      z.object({
        id: z.string(),
        consumerKeyEnv: z.string(),
        consumerSecretEnv: z.string(),
        weightUnit: z.enum(['kg', 'g', 'lbs', 'oz']).optional(),
        /** Created in this shop at start (weights in the shop's unit), after any given with --product. */
        products: z.array(productSchema).optional(),
      }),
    )
    .min(1),
});

/** "Boubou wax:12500:0.8:BW-01" → a product (price and weight as WooCommerce writes them: decimal strings). */
export function parseProductSpec(spec: string): EmulatedProductInput {
  const [name = '', price, weight, sku] = spec.split(':').map((part) => part.trim());
  if (!name) throw new Error(`--product "${spec}": expected name:price[:weight[:sku]], e.g. "Boubou wax:12500:0.8"`);
  for (const [label, value] of [
    ['price', price],
    ['weight', weight],
  ] as const) {
    if (value !== undefined && value !== '' && !/^\d+(\.\d+)?$/.test(value))
      throw new Error(`--product "${spec}": the ${label} "${value}" is not a number`);
  }
  return { name, ...(price ? { price } : {}), ...(weight ? { weight } : {}), ...(sku ? { sku } : {}) };
}

export async function emulateWooCommerce(
  options: EmulateOptions,
  logger: Logger,
  print: (line: string) => void,
): Promise<RunningEmulator> {
  const { startWooEmulator } = await loadWooEmulator();
  const env = rawEnvironment();
  const fromCommandLine = (options.products ?? []).map(parseProductSpec);
  const shops = options.config
    ? wooConfig.parse(JSON.parse(readFileSync(options.config, 'utf8'))).shops.map((s) => ({
        id: s.id,
        consumerKey: required(env, s.consumerKeyEnv),
        consumerSecret: required(env, s.consumerSecretEnv),
        weightUnit: s.weightUnit,
        products: s.products ?? [],
      }))
    : [
        {
          id: 'demo-shop',
          consumerKey: `ck_${randomBytes(20).toString('hex')}`,
          consumerSecret: `cs_${randomBytes(20).toString('hex')}`,
          products: [],
        },
      ];
  const emulator = await startWooEmulator({ shops, host: options.host, port: options.port, logger });
  print(`WooCommerce emulator on port ${emulator.port}`);
  for (const shop of shops) {
    print(`  shop ${shop.id}: ${emulator.siteUrl(shop.id)}`);
    if (!options.config)
      print(`  consumer key for this run: ${shop.consumerKey}; consumer secret: ${shop.consumerSecret}`);
    for (const input of [...fromCommandLine, ...shop.products]) {
      const product = await emulator.createProduct(shop.id, input);
      print(
        `  product ${String(product.id)}: ${input.name}${input.price ? `, price ${input.price}` : ''}${input.weight ? `, weight ${input.weight}` : ''}`,
      );
    }
  }
  return { describe: emulator.siteUrl(shops[0]!.id), close: () => emulator.close() };
}

function required(env: Record<string, string | undefined>, name: string): string {
  const value = env[name];
  if (!value) throw new Error(`environment variable ${name} is not set`);
  return value;
}
