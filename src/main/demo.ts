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
import { createLogger } from '../log.js';
import type { DispatchEmulator } from '@relais/emulators/dispatch';
import type { ShopifyEmulator } from '@relais/emulators/shopify';
import type { WooEmulator } from '@relais/emulators/woocommerce';
import { loadDispatchEmulator, loadShopifyEmulator, loadWooEmulator } from './emulators.js';
import { connectShopify, connectWooCommerce, fillSettingsAndSwitchOn, logIn, MerchantBrowser } from './demo-connect.js';
import { startWeb, type RunningWeb } from './web.js';
import { startWorker, type RunningWorker } from './worker.js';
import {
  deliverySettings,
  wireDeliveryWebhooks,
  servedByBoth,
  writeTokenFile,
  address,
  describe,
  detail,
  writtenInShop,
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
  const stops: (() => Promise<void>)[] = [];
  const stop = async () => {
    for (const s of stops.reverse()) await s().catch(() => undefined);
  };
  try {
    const [{ startDispatchEmulator }, { startShopifyEmulator }, { startWooEmulator }] = await Promise.all([
      loadDispatchEmulator(),
      loadShopifyEmulator(),
      loadWooEmulator(),
    ]);
    const redis = await demoRedis(options.redisUrl, print);
    stops.push(redis.stop);
    const database = await demoDatabase(options.databaseUrl, print);
    stops.push(database.stop);
    const secret = () => randomBytes(16).toString('hex');
    // Each merchant's account at the delivery service, and the Shopify app Relais is (its Dev Dashboard client).
    const dispatchKeys: Record<string, string> = {
      [SHOPIFY_SHOP]: `pk_live_${secret()}`,
      [WOO_SHOP]: `pk_live_${secret()}`,
    };
    const shopifyApp = { clientId: `demo-app-${secret()}`, clientSecret: secret() };
    const failSet = new Set<string>();
    const dispatch: DispatchEmulator = await startDispatchEmulator({
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
    const shopify: ShopifyEmulator = await startShopifyEmulator({
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
    const woo: WooEmulator = await startWooEmulator({
      // The store's own admin keys, which Relais never gets: the app authorisation makes it a key pair of its own.
      shops: [{ id: WOO_SHOP, consumerKey: `ck_${secret()}`, consumerSecret: `cs_${secret()}`, weightUnit: 'kg' }],
      logger,
    });
    stops.push(() => woo.close());

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
    const web: RunningWeb = await startWeb({
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
    const worker: RunningWorker = await startWorker({
      ...base,
      resolver: NeighbourhoodResolver.load(),
      concurrency: 5,
      pollIntervalMs: 5_000,
    });
    stops.push(() => worker.close());
    print(
      `Relais demo: web ${web.url}, dispatch emulator ${dispatch.baseUrl}, Redis ${redis.describe}, PostgreSQL ${database.describe}`,
    );

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
    await logIn(merchant, web.url, dashboardToken);
    await connectShopify(merchant, web.url, { shopId: SHOPIFY_SHOP, domain: SHOPIFY_DOMAIN });
    print(`Connected ${SHOPIFY_SHOP} through the Shopify app install (authorization code grant, expiring token)`);
    await switchOn(SHOPIFY_SHOP);
    await connectWooCommerce(merchant, web.url, { shopId: WOO_SHOP, storeUrl: woo.siteUrl(WOO_SHOP) });
    print(`Connected ${WOO_SHOP} through WooCommerce app authorisation (keys posted to Relais, webhooks registered)`);
    await switchOn(WOO_SHOP);
    await wireDeliveryWebhooks(web, dispatch, [SHOPIFY_SHOP, WOO_SHOP]);
    await servedByBoth([web.runtime, worker.runtime], [SHOPIFY_SHOP, WOO_SHOP]);

    print('Placing sample orders…');
    const tracked: { ext: string; shop: string; order: string; scenario: string }[] = [];
    const place = (shop: string, id: number | string, name: string, scenario: string) =>
      tracked.push({ ext: `${shop}:${String(id)}`, shop, order: name, scenario });

    const cod = shopify.createOrder(SHOPIFY_DOMAIN, {
      shippingAddress: {
        ...address('Aminata Fall', 'Villa 12, Sacré Coeur 3', 'Dakar'),
        latitude: 14.7167,
        longitude: -17.4677,
      },
    });
    place('dakar-mode', cod.id, String(cod.name), 'Shopify, cash on delivery');
    const prepaid = shopify.createOrder(SHOPIFY_DOMAIN, {
      gateway: 'shopify_payments',
      financialStatus: 'pending',
      shippingAddress: address('Moussa Sarr', 'Cité Keur Gorgui, immeuble 4', 'Dakar'),
    });
    place('dakar-mode', prepaid.id, String(prepaid.name), 'Shopify, prepaid (paid a moment later)');
    const unresolved = shopify.createOrder(SHOPIFY_DOMAIN, {
      shippingAddress: { ...address('Ibrahima Ba', 'Rue 10', 'Dakar'), latitude: null, longitude: null },
    });
    place('dakar-mode', unresolved.id, String(unresolved.name), 'Shopify, address without a neighbourhood');
    const failing = shopify.createOrder(SHOPIFY_DOMAIN, {
      shippingAddress: address('Fatou Ndiaye', 'Ouakam, cité Avion', 'Dakar'),
    });
    place('dakar-mode', failing.id, String(failing.name), 'Shopify, cash on delivery, courier cannot deliver');
    failSet.add(`dakar-mode:${String(failing.id)}`);

    const product = await woo.createProduct(WOO_SHOP, { name: 'Casque audio', price: '18000', weight: '0.6' });
    const wooOrder = await woo.createOrder(WOO_SHOP, {
      status: 'processing',
      payment_method: 'cod',
      payment_method_title: 'Paiement à la livraison',
      shipping: {
        first_name: 'Koffi',
        last_name: 'Kouassi',
        address_1: 'Cocody Angré, 7e tranche',
        city: 'Abidjan',
        country: 'CI',
        phone: '+2250701020304',
      },
      billing: {
        first_name: 'Koffi',
        last_name: 'Kouassi',
        phone: '+2250701020304',
        email: 'koffi@example.com',
        country: 'CI',
      },
      line_items: [{ product_id: product.id, quantity: 1 }],
    });
    place(WOO_SHOP, String(wooOrder.id), `#${String(wooOrder.id)}`, 'WooCommerce, cash on delivery');
    setTimeout(() => {
      try {
        shopify.markPaid(SHOPIFY_DOMAIN, prepaid.id);
      } catch (error) {
        logger.warn({ err: (error as Error).message }, 'demo: could not mark the prepaid order paid');
      }
    }, 1_500).unref();

    const finalStates = new Set(['delivered', 'returned', 'held', 'cancelled', 'delivery_failed']);
    const writeBacksSettled = async () => {
      const counts = await Promise.all(
        [worker.runtime.queues.shopEvents, worker.runtime.queues.deliveries].map((q) =>
          q.getJobCounts('waiting', 'active', 'delayed', 'prioritized'),
        ),
      );
      return counts.every((c) => Object.values(c).every((n) => n === 0));
    };
    const last = new Map<string, string>();
    const deadline = Date.now() + 90_000;
    for (;;) {
      const records = await Promise.all(tracked.map((t) => worker.runtime.ledger.get(t.ext)));
      records.forEach((r, i) => {
        const t = tracked[i]!;
        const line = r ? describe(r) : 'waiting for the webhook';
        if (last.get(t.ext) !== line) {
          last.set(t.ext, line);
          print(`  ${t.order.padEnd(6)} ${t.scenario.padEnd(48)} ${line}`);
        }
      });
      const done = records.every(
        (r) =>
          r &&
          finalStates.has(r.state) &&
          (r.state !== 'delivery_failed' || r.delivery?.step === 'returned' || Date.now() > deadline - 60_000),
      );
      // The ledger says delivered as soon as the courier's webhook is applied; the shop's last write-backs
      // (the final fulfillment event, paid) may still be queued: the table waits for them too.
      if ((done && (await writeBacksSettled())) || Date.now() > deadline) break;
      await new Promise((r) => setTimeout(r, 250));
    }
    const records = await Promise.all(tracked.map((t) => worker.runtime.ledger.get(t.ext)));
    const outcomes: DemoOutcome[] = tracked.map((t, i) => ({
      shop: t.shop,
      order: t.order,
      scenario: t.scenario,
      state: records[i]?.state ?? 'not received',
      detail: records[i] ? detail(records[i]) : '',
      inShop: records[i] ? writtenInShop(records[i]) : '',
      trackingUrl: records[i]?.shipment?.publicTrackingUrl,
    }));
    print('');
    print(table(outcomes));
    print('');
    print(
      `Held orders: npm run relais -- held   (with REDIS_URL=${redis.url} RELAIS_REDIS_PREFIX=${prefix} DATABASE_URL=${databaseUrlForHumans(database.url)} RELAIS_DB_SCHEMA=${database.schema})`,
    );
    print(
      `Dashboard: ${web.url}/dashboard  (token: ${options.dashboardToken ? 'your RELAIS_DASHBOARD_TOKEN' : `in ${writeTokenFile(dashboardToken)}`})`,
    );
    return { outcomes, dashboardUrl: `${web.url}/dashboard`, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** The settings both shops share: their delivery service account (the emulator), default COD gateways and policy. */
