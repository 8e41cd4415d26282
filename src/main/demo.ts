/**
 * `npm run demo`: Relais end to end on one machine, with no shop and no courier account.
 *
 * Starts (or reuses) Redis, the three emulators (dispatch in real time, Shopify, WooCommerce), the web
 * process (with a Shopify app configured against the Shopify emulator) and the worker, with no registry file;
 * connects the two shops through the flows a merchant uses (./demo-connect.ts: the Shopify app install,
 * WooCommerce app authorisation, the settings form, "Check and switch on"); places sample orders in both
 * shops (cash on delivery, prepaid, one address that cannot be resolved, one delivery that fails); lets the
 * emulated couriers run; prints progress as it happens and ends on a table of outcomes.
 *
 * Secrets (RELAIS_SECRET_KEYS, the app's client secret, the delivery service keys) are generated for the run
 * and never printed. Redis: REDIS_URL when it answers, otherwise a
 * private redis-server on a free port, otherwise a message saying what to install; PostgreSQL likewise
 * (DATABASE_URL, a private server, or what to install).
 */
import { randomBytes } from 'node:crypto';
import { Secret } from '../shops/secret.js';
import { ShopRegistry } from '../shops/shops.js';
import type { ShopSettingsForm } from '../dashboard/use-cases/shop-settings.js';
import { NeighbourhoodResolver } from '../geo/resolver.js';
import { databaseUrlForHumans } from '../adapters/postgres/database.js';
import { createLogger, type Logger } from '../log.js';
import type { DispatchEmulator } from '@relais/emulators/dispatch';
import type { ShopifyEmulator } from '@relais/emulators/shopify';
import type { WooEmulator } from '@relais/emulators/woocommerce';
import { loadDispatchEmulator, loadShopifyEmulator, loadWooEmulator } from './emulators.js';
import { connectShopify, connectWooCommerce, fillSettingsAndSwitchOn, logIn, MerchantBrowser } from './demo-connect.js';
import { followOrders, placeSampleOrders } from './demo-orders.js';
import { startWeb, type RunningWeb } from './web.js';
import { startWorker, type RunningWorker } from './worker.js';
import {
  deliverySettings,
  wireDeliveryWebhooks,
  servedByBoth,
  writeTokenFile,
  table,
  demoDatabase,
  demoRedis,
  freePort,
} from './demo-parts.js';
import type { DemoOutcome } from './demo-parts.js';

export type { DemoOutcome };

export interface DemoOptions {
  redisUrl?: string;
  /** A PostgreSQL to use (DATABASE_URL) when it answers; the demo works in a schema of its own there, dropped at the end. */
  databaseUrl?: string;
  port?: number;
  /** Stop after the outcome table instead of serving until Ctrl-C. */
  once?: boolean;
  /** Time between courier stages (ms). */
  stepMs?: number;
  print?: (line: string) => void;
  logLevel?: string;
  /** The dashboard's token; generated for the run when absent (written to a private file, never printed). */
  dashboardToken?: string;
}

const SHOPIFY_SHOP = 'dakar-mode';
const SHOPIFY_DOMAIN = 'dakar-mode.myshopify.com';
const WOO_SHOP = 'abidjan-tech';

/** What each merchant types in its shop's settings form, besides the delivery service's account. */
const SHOP_SETTINGS: Record<string, Omit<ShopSettingsForm, keyof ReturnType<typeof deliverySettings>>> = {
  [SHOPIFY_SHOP]: {
    name: 'Dakar Mode',
    country: 'SN',
    pickupNeighbourhood: 'Plateau',
    pickupAddress: '12 avenue Léopold Sédar Senghor',
    pickupContactName: 'Awa Ndiaye',
    pickupContactPhone: '+221770000001',
  },
  [WOO_SHOP]: {
    name: 'Abidjan Tech',
    country: 'CI',
    pickupNeighbourhood: 'Marcory',
    pickupAddress: 'Rue de la Paix, zone 4',
    pickupContactName: 'Koffi Yao',
    pickupContactPhone: '+2250700000001',
  },
};

export async function runDemo(
  options: DemoOptions = {},
): Promise<{ outcomes: DemoOutcome[]; dashboardUrl: string; stop(): Promise<void> }> {
  const print = options.print ?? ((line: string) => process.stdout.write(`${line}\n`));
  const logger = createLogger({ level: options.logLevel ?? 'warn', name: 'demo' });
  const stops: Stops = [];
  const stop = async () => {
    for (const s of stops.reverse()) await s().catch(() => undefined);
  };
  try {
    const services = await startServices(options, logger, print, stops);
    const relais = await startRelais(options, services, logger, stops);
    print(
      `Relais demo: web ${relais.web.url}, dispatch emulator ${services.dispatch.baseUrl}, Redis ${services.redis.describe}, PostgreSQL ${services.database.describe}`,
    );
    await connectShops(services, relais, print);
    print('Placing sample orders…');
    const tracked = await placeSampleOrders({
      shopify: services.shopify,
      shopifyShop: SHOPIFY_SHOP,
      shopifyDomain: SHOPIFY_DOMAIN,
      woo: services.woo,
      wooShop: WOO_SHOP,
      failSet: services.failSet,
      logger,
    });
    const outcomes = await followOrders(relais.worker.runtime, tracked, print);
    printEnding(options, services, relais, outcomes, print);
    return { outcomes, dashboardUrl: `${relais.web.url}/dashboard`, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** What to undo at the end, in the reverse order of starting. */
type Stops = (() => Promise<void>)[];

/** Redis, PostgreSQL and the three emulators, with the run's generated keys and app credentials. */
interface DemoServices {
  redis: Awaited<ReturnType<typeof demoRedis>>;
  database: Awaited<ReturnType<typeof demoDatabase>>;
  dispatch: DispatchEmulator;
  shopify: ShopifyEmulator;
  woo: WooEmulator;
  /** Each merchant's account at the delivery service. */
  dispatchKeys: Record<string, string>;
  /** The Shopify app Relais is (its Dev Dashboard client). */
  shopifyApp: { clientId: string; clientSecret: string };
  /** The external order ids whose courier cannot deliver. */
  failSet: Set<string>;
}

const secret = () => randomBytes(16).toString('hex');

async function startServices(
  options: DemoOptions,
  logger: Logger,
  print: (line: string) => void,
  stops: Stops,
): Promise<DemoServices> {
  const [{ startDispatchEmulator }, { startShopifyEmulator }, { startWooEmulator }] = await Promise.all([
    loadDispatchEmulator(),
    loadShopifyEmulator(),
    loadWooEmulator(),
  ]);
  const redis = await demoRedis(options.redisUrl, print);
  stops.push(redis.stop);
  const database = await demoDatabase(options.databaseUrl, print);
  stops.push(database.stop);
  const dispatchKeys: Record<string, string> = {
    [SHOPIFY_SHOP]: `pk_live_${secret()}`,
    [WOO_SHOP]: `pk_live_${secret()}`,
  };
  const shopifyApp = { clientId: `demo-app-${secret()}`, clientSecret: secret() };
  const failSet = new Set<string>();
  const dispatch = await startDispatchEmulator({
    organisations: Object.entries(dispatchKeys).map(([shop, key]) => ({
      id: `org_${shop}`,
      name: shop,
      apiKeys: [key],
    })),
    clock: 'realtime',
    courierStepMs: options.stepMs ?? 700,
    deliveryOutcome: ({ externalOrderId }) => (failSet.has(externalOrderId) ? 'fail' : 'deliver'),
    logger,
  });
  stops.push(() => dispatch.close());
  const shopify = await startShopifyEmulator({
    shops: [
      {
        domain: SHOPIFY_DOMAIN,
        // The shop's own legacy token, which Relais never gets: it connects through the app install.
        accessToken: `shpat_${secret()}`,
        clientId: shopifyApp.clientId,
        clientSecret: shopifyApp.clientSecret,
        name: 'Dakar Mode',
      },
    ],
    logger,
  });
  stops.push(() => shopify.close());
  const woo = await startWooEmulator({
    // The store's own admin keys, which Relais never gets: the app authorisation makes it a key pair of its own.
    shops: [{ id: WOO_SHOP, consumerKey: `ck_${secret()}`, consumerSecret: `cs_${secret()}`, weightUnit: 'kg' }],
    logger,
  });
  stops.push(() => woo.close());
  return { redis, database, dispatch, shopify, woo, dispatchKeys, shopifyApp, failSet };
}

interface DemoRelais {
  web: RunningWeb;
  worker: RunningWorker;
  prefix: string;
  dashboardToken: string;
}

/** Relais's web process (its Shopify app set against the emulator) and worker, serving no shop yet. */
async function startRelais(
  options: DemoOptions,
  services: DemoServices,
  logger: Logger,
  stops: Stops,
): Promise<DemoRelais> {
  const { redis, database, shopify, shopifyApp } = services;
  // No registry file: the shops are connected below, and web and worker serve them live once switched on.
  const port = options.port ?? (await freePort());
  const publicUrl = `http://127.0.0.1:${String(port)}`;
  const prefix = `{relais-demo-${randomBytes(3).toString('hex')}}`;
  const base = {
    redisUrl: redis.url,
    prefix,
    shops: new ShopRegistry([]),
    liveShops: {},
    secretKeys: `demo:${randomBytes(32).toString('base64')}`,
    logger,
    databaseUrl: database.url,
    databaseSchema: database.schema,
  };
  const dashboardToken = options.dashboardToken ?? randomBytes(24).toString('base64url');
  const web = await startWeb({
    ...base,
    port,
    dashboardToken,
    publicUrl,
    shopifyApp: {
      clientId: shopifyApp.clientId,
      clientSecret: new Secret(shopifyApp.clientSecret, 'the demo'),
      publicUrl,
      adminUrlFor: (domain) => shopify.adminUrl(domain),
    },
  });
  stops.push(() => web.close());
  const worker = await startWorker({
    ...base,
    resolver: NeighbourhoodResolver.load(),
    concurrency: 5,
    pollIntervalMs: 5_000,
  });
  stops.push(() => worker.close());
  return { web, worker, prefix, dashboardToken };
}

/**
 * The two shops connected as their merchants would: the Shopify app install and the WooCommerce app
 * authorisation, each shop's settings filled in and switched on, the delivery service's webhooks pointed at
 * Relais; returns once web and worker both serve them.
 */
async function connectShops(services: DemoServices, relais: DemoRelais, print: (line: string) => void): Promise<void> {
  const { dispatch, shopify, woo, dispatchKeys } = services;
  const { web, worker } = relais;
  // The app's webhook subscriptions, as `shopify app deploy` makes them from shopify.app.toml.
  for (const topic of ['orders/create', 'orders/paid', 'orders/updated', 'orders/cancelled'])
    shopify.subscribe(SHOPIFY_DOMAIN, topic, `${web.url}/webhooks/shopify`);
  const merchant = new MerchantBrowser();
  const switchOn = async (shop: string) => {
    await fillSettingsAndSwitchOn(merchant, web.url, shop, {
      ...SHOP_SETTINGS[shop]!,
      ...deliverySettings(dispatch, dispatchKeys[shop]!),
    });
    print(`Filled in ${shop}'s settings and switched it on: the doctor's checks passed`);
  };
  await logIn(merchant, web.url, relais.dashboardToken);
  await connectShopify(merchant, web.url, { shopId: SHOPIFY_SHOP, domain: SHOPIFY_DOMAIN });
  print(`Connected ${SHOPIFY_SHOP} through the Shopify app install (authorization code grant, expiring token)`);
  await switchOn(SHOPIFY_SHOP);
  await connectWooCommerce(merchant, web.url, { shopId: WOO_SHOP, storeUrl: woo.siteUrl(WOO_SHOP) });
  print(`Connected ${WOO_SHOP} through WooCommerce app authorisation (keys posted to Relais, webhooks registered)`);
  await switchOn(WOO_SHOP);
  await wireDeliveryWebhooks(web, dispatch, [SHOPIFY_SHOP, WOO_SHOP]);
  await servedByBoth([web.runtime, worker.runtime], [SHOPIFY_SHOP, WOO_SHOP]);
}

/** The outcome table, then where to look further (held orders, the dashboard), never a secret. */
function printEnding(
  options: DemoOptions,
  { redis, database }: DemoServices,
  { web, prefix, dashboardToken }: DemoRelais,
  outcomes: DemoOutcome[],
  print: (line: string) => void,
): void {
  print('');
  print(table(outcomes));
  print('');
  print(
    `Held orders: npm run relais -- held   (with REDIS_URL=${redis.url} RELAIS_REDIS_PREFIX=${prefix} DATABASE_URL=${databaseUrlForHumans(database.url)} RELAIS_DB_SCHEMA=${database.schema})`,
  );
  print(
    `Dashboard: ${web.url}/dashboard  (token: ${options.dashboardToken ? 'your RELAIS_DASHBOARD_TOKEN' : `in ${writeTokenFile(dashboardToken)}`})`,
  );
}
