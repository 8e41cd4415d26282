/**
 * `npm run demo`: Relais end to end on one machine, with no shop and no courier account.
 *
 * Starts (or reuses) Redis, the three emulators (dispatch in real time, Shopify, WooCommerce), the web
 * process and the worker; wires every webhook; places sample orders in both shops (cash on delivery,
 * prepaid, one address that cannot be resolved, one delivery that fails); lets the emulated couriers
 * run; prints progress as it happens and ends on a table of outcomes.
 *
 * Secrets are generated for the run and never printed. Redis: REDIS_URL when it answers, otherwise a
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
import { buildShopRegistry } from '../config/shops.js';
import { NeighbourhoodResolver } from '../geo/resolver.js';
import type { OrderRecord } from '../ledger/order-ledger.js';
import { createPool, databaseUrlForHumans, migrate } from '../ledger/postgres/database.js';
import { createLogger } from '../log.js';
import { postgresAnswers, startPrivatePostgres, type PrivatePostgres } from './private-postgres.js';
import type { DispatchEmulator } from '@relais/emulators/dispatch';
import type { ShopifyEmulator } from '@relais/emulators/shopify';
import type { WooEmulator } from '@relais/emulators/woocommerce';
import { loadDispatchEmulator, loadShopifyEmulator, loadWooEmulator } from './emulators.js';
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

const SHOPIFY_DOMAIN = 'dakar-mode.myshopify.com';
const WOO_SHOP = 'abidjan-tech';

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
    const secrets = {
      dispatchKey: `pk_live_${secret()}`,
      webhookToken: secret(),
      shopifyToken: `shpat_${secret()}`,
      shopifySecret: secret(),
      wooKey: `ck_${secret()}`,
      wooSecret: `cs_${secret()}`,
      wooWebhookSecret: secret(),
    };
    const failSet = new Set<string>();
    const dispatch: DispatchEmulator = await startDispatchEmulator({
      organisations: [{ id: 'org_demo', name: 'Demo', apiKeys: [secrets.dispatchKey] }],
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
          accessToken: secrets.shopifyToken,
          clientSecret: secrets.shopifySecret,
          name: 'Dakar Mode',
        },
      ],
      logger,
    });
    stops.push(() => shopify.close());
    const woo: WooEmulator = await startWooEmulator({
      shops: [{ id: WOO_SHOP, consumerKey: secrets.wooKey, consumerSecret: secrets.wooSecret, weightUnit: 'kg' }],
      logger,
    });
    stops.push(() => woo.close());

    const env: Record<string, string> = {
      DISPATCH_KEY: secrets.dispatchKey,
      DISPATCH_WEBHOOK_TOKEN: secrets.webhookToken,
      SHOPIFY_TOKEN: secrets.shopifyToken,
      SHOPIFY_SECRET: secrets.shopifySecret,
      WOO_KEY: secrets.wooKey,
      WOO_SECRET: secrets.wooSecret,
      WOO_WEBHOOK_SECRET: secrets.wooWebhookSecret,
    };
    const dispatchConfig = {
      apiKey: { env: 'DISPATCH_KEY' },
      baseUrl: dispatch.baseUrl,
      trackingUrl: dispatch.trackingUrl,
      webhookToken: { env: 'DISPATCH_WEBHOOK_TOKEN' },
    };
    const shops = buildShopRegistry(
      {
        shops: [
          {
            id: 'dakar-mode',
            name: 'Dakar Mode',
            platform: 'shopify',
            country: 'SN',
            shopify: {
              domain: SHOPIFY_DOMAIN,
              accessToken: { env: 'SHOPIFY_TOKEN' },
              webhookSecret: { env: 'SHOPIFY_SECRET' },
              adminUrl: shopify.adminUrl(SHOPIFY_DOMAIN),
            },
            dispatch: dispatchConfig,
            pickup: {
              neighbourhood: 'Plateau',
              address: '12 avenue Léopold Sédar Senghor',
              coords: { lat: 14.6681, lng: -17.4322 },
              contactName: 'Awa Ndiaye',
              contactPhone: '+221770000001',
            },
          },
          {
            id: WOO_SHOP,
            name: 'Abidjan Tech',
            platform: 'woocommerce',
            country: 'CI',
            woocommerce: {
              url: woo.siteUrl(WOO_SHOP),
              consumerKey: { env: 'WOO_KEY' },
              consumerSecret: { env: 'WOO_SECRET' },
              webhookSecret: { env: 'WOO_WEBHOOK_SECRET' },
            },
            dispatch: dispatchConfig,
            pickup: {
              neighbourhood: 'Marcory',
              address: 'Rue de la Paix, zone 4',
              contactName: 'Koffi Yao',
              contactPhone: '+2250700000001',
            },
          },
        ],
      },
      (ref) => ('env' in ref ? env[ref.env] : undefined),
    );
    const prefix = `{relais-demo-${randomBytes(3).toString('hex')}}`;
    const base = {
      redisUrl: redis.url,
      prefix,
      shops,
      logger,
      databaseUrl: database.url,
      databaseSchema: database.schema,
    };
    const dashboardToken = options.dashboardToken ?? randomBytes(24).toString('base64url');
    const web: RunningWeb = await startWeb({ ...base, port: options.port ?? 0, dashboardToken });
    stops.push(() => web.close());
    const worker: RunningWorker = await startWorker({
      ...base,
      resolver: NeighbourhoodResolver.load(),
      concurrency: 5,
      pollIntervalMs: 5_000,
    });
    stops.push(() => worker.close());

    // Wire the webhooks as a merchant (and the dispatch console) would.
    for (const topic of ['orders/create', 'orders/paid', 'orders/updated', 'orders/cancelled'])
      shopify.subscribe(SHOPIFY_DOMAIN, topic, `${web.url}/webhooks/shopify`);
    await woo.addWebhook(WOO_SHOP, {
      topic: 'order.created',
      deliveryUrl: `${web.url}/webhooks/woocommerce/${WOO_SHOP}`,
      secret: secrets.wooWebhookSecret,
    });
    await woo.addWebhook(WOO_SHOP, {
      topic: 'order.updated',
      deliveryUrl: `${web.url}/webhooks/woocommerce/${WOO_SHOP}`,
      secret: secrets.wooWebhookSecret,
    });
    dispatch.setOrganisationWebhook('org_demo', `${web.url}/webhooks/dispatch/dakar-mode/${secrets.webhookToken}`);

    print(
      `Relais demo: web ${web.url}, dispatch emulator ${dispatch.baseUrl}, Redis ${redis.describe}, PostgreSQL ${database.describe}`,
    );
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
