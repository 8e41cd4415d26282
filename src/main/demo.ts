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
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { Secret } from '../config/secret.js';
import { ShopRegistry } from '../config/shops.js';
import type { ShopSettingsForm } from '../dashboard/use-cases/shop-settings.js';
import { NeighbourhoodResolver } from '../geo/resolver.js';
import type { OrderRecord } from '../ledger/order-ledger.js';
import { createPool, databaseUrlForHumans, migrate } from '../ledger/postgres/database.js';
import { createLogger } from '../log.js';
import { postgresAnswers, startPrivatePostgres, type PrivatePostgres } from './private-postgres.js';
import type { DispatchEmulator } from '@relais/emulators/dispatch';
import type { ShopifyEmulator } from '@relais/emulators/shopify';
import type { WooEmulator } from '@relais/emulators/woocommerce';
import { loadDispatchEmulator, loadShopifyEmulator, loadWooEmulator } from './emulators.js';
import { connectShopify, connectWooCommerce, fillSettingsAndSwitchOn, logIn, MerchantBrowser } from './demo-connect.js';
import type { Runtime } from './runtime.js';
import { startWeb, type RunningWeb } from './web.js';
import { startWorker, type RunningWorker } from './worker.js';

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

export interface DemoOutcome {
  shop: string;
  order: string;
  scenario: string;
  state: string;
  /** Where it goes and what the courier collects, or why it is held. */
  detail: string;
  /** What Relais wrote into the shop: tracking link, delivery steps, paid. */
  inShop: string;
  trackingUrl?: string;
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
function deliverySettings(dispatch: DispatchEmulator, apiKey: string) {
  return {
    codGateways: '',
    dispatchCashOnDeliveryAt: 'created',
    dispatchBaseUrl: dispatch.baseUrl,
    dispatchTrackingUrl: dispatch.trackingUrl,
    dispatchProfile: 'default',
    dispatchApiKey: apiKey,
  };
}

/**
 * What each merchant does in the delivery service's console: the organisation's webhook pointed at the shop's
 * delivery-webhook URL. The dashboard names that URL's token without showing it, so the demo, as the operator,
 * reads it from the sealed store (it goes to the emulator only, never to the terminal).
 */
async function wireDeliveryWebhooks(web: RunningWeb, dispatch: DispatchEmulator, shops: string[]): Promise<void> {
  for (const shop of shops) {
    const token = await web.runtime.shopSecrets!.get(shop, 'dispatch.webhookToken');
    if (!token) throw new Error(`demo: ${shop} has no delivery-webhook token after its settings were saved`);
    dispatch.setOrganisationWebhook(`org_${shop}`, `${web.url}/webhooks/dispatch/${shop}/${token.value.reveal()}`);
  }
}

/** Switching on announces the change; web and worker reload it within moments. The orders wait for that. */
async function servedByBoth(runtimes: Runtime[], shops: string[]): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (!runtimes.every((r) => shops.every((id) => r.options.shops.get(id)))) {
    if (Date.now() > deadline) throw new Error(`demo: web and worker did not start serving ${shops.join(', ')}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The generated dashboard token goes to a file only its owner can read, not to the terminal or a log. */
function writeTokenFile(token: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'relais-demo-'));
  const file = join(dir, 'dashboard-token');
  writeFileSync(file, `${token}\n`, { mode: 0o600 });
  return file;
}

function address(name: string, address1: string, city: string) {
  const [first_name, ...rest] = name.split(' ');
  return {
    first_name,
    last_name: rest.join(' '),
    name,
    address1,
    address2: '',
    city,
    province: 'Dakar',
    country: 'Senegal',
    country_code: 'SN',
    phone: '+221 77 555 00 00',
    zip: '',
  };
}

function describe(r: OrderRecord): string {
  if (r.state === 'held') return `held: ${r.hold?.message ?? ''}`;
  const where = r.delivery ? ` (${r.delivery.serviceStatus})` : r.shipment ? ` (${r.shipment.status})` : '';
  return `${r.state}${where}`;
}

function detail(r: OrderRecord): string {
  if (r.state === 'held') return r.hold?.message ?? '';
  const collect = r.shipment?.orderAmountXof ? `collect ${r.shipment.orderAmountXof} XOF` : 'prepaid';
  return [r.neighbourhood ? `→ ${r.neighbourhood.name}` : '', collect].filter(Boolean).join(', ');
}

function writtenInShop(r: OrderRecord): string {
  const written = r.delivery?.written;
  if (!written) return r.state === 'held' ? 'nothing (held)' : '';
  const steps = Object.keys(written.steps).length;
  return [
    written.dispatch ? 'tracking link' : '',
    steps ? `${steps} step${steps > 1 ? 's' : ''}` : '',
    written.paid ? 'paid' : '',
  ]
    .filter(Boolean)
    .join(' + ');
}

function table(rows: DemoOutcome[]): string {
  const head = ['order', 'scenario', 'outcome', 'neighbourhood and cash', 'written in the shop'];
  const cells = rows.map((r) => [r.order, r.scenario, r.state, r.state === 'held' ? 'see below' : r.detail, r.inShop]);
  const widths = head.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
  const fmt = (c: string[]) =>
    c
      .map((v, i) => v.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  const lines = [fmt(head), widths.map((w) => '-'.repeat(w)).join('  '), ...cells.map(fmt), ''];
  for (const r of rows) {
    if (r.state === 'held') lines.push(`${r.order} held: ${r.detail}`);
    else if (r.trackingUrl) lines.push(`${r.order} public tracking: ${r.trackingUrl}`);
  }
  return lines.join('\n');
}

/**
 * The demo's ledger: DATABASE_URL when it answers, otherwise a private PostgreSQL from the system's binaries,
 * otherwise a message saying what to install. Either way a schema of the run's own, migrated as `relais migrate`
 * would, so a demo never meets an earlier run's orders; dropped at the end.
 */
async function demoDatabase(
  url: string | undefined,
  print: (line: string) => void,
): Promise<{ url: string; schema: string; describe: string; stop(): Promise<void> }> {
  let server: PrivatePostgres | undefined;
  if (!url || !(await postgresAnswers(url))) {
    if (url) print(`DATABASE_URL ${databaseUrlForHumans(url)} does not answer; starting a private PostgreSQL instead`);
    server = await startPrivatePostgres();
  }
  const databaseUrl = server?.url ?? url!;
  const schema = `relais_demo_${randomBytes(3).toString('hex')}`;
  const pool = createPool({ url: databaseUrl, schema });
  try {
    await migrate(pool, schema);
  } catch (error) {
    await pool.end();
    await server?.stop();
    throw error;
  }
  return {
    url: databaseUrl,
    schema,
    describe: server
      ? `private server on port ${server.port}, schema ${schema}`
      : `${databaseUrlForHumans(databaseUrl)}, schema ${schema}`,
    stop: async () => {
      if (!server) await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => undefined);
      await pool.end();
      await server?.stop();
    },
  };
}

async function demoRedis(
  url: string | undefined,
  print: (line: string) => void,
): Promise<{ url: string; describe: string; stop(): Promise<void> }> {
  if (url && (await answers(url))) return { url, describe: url, stop: async () => undefined };
  if (url) print(`REDIS_URL ${url} does not answer; starting a private redis-server instead`);
  const port = await freePort();
  let child: ChildProcess;
  try {
    child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
      stdio: 'ignore',
    });
    await new Promise<void>((resolve, reject) => {
      child.once('error', reject);
      child.once('spawn', () => resolve());
    });
  } catch {
    throw new Error(
      'Redis is needed: set REDIS_URL to a running Redis, or install redis-server (Debian/Ubuntu: apt-get install redis-server; macOS: brew install redis)',
    );
  }
  const privateUrl = `redis://127.0.0.1:${port}`;
  const deadline = Date.now() + 5_000;
  while (!(await answers(privateUrl))) {
    if (Date.now() > deadline) throw new Error('redis-server did not start');
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    url: privateUrl,
    describe: `private redis-server on port ${port}`,
    stop: async () => void child.kill('SIGTERM'),
  };
}

async function answers(url: string): Promise<boolean> {
  const client = new Redis(url, {
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    connectTimeout: 1_000,
  });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return (await client.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    client.disconnect();
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}
