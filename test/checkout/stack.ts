/**
 * The stack the checkout-price tests drive: a private redis-server, the dispatch emulator, and the real web
 * process (createApp, so the checkout routes are mounted exactly as in production), with a shop registry built
 * from the test harness's two shops plus variants that differ only by their checkoutRates policy. Log lines are
 * kept so tests can read what a merchant would read.
 */
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import type { ShopRegistry } from '../../src/shops/shops.js';
import type { DispatchEmulator } from '@relais/emulators/dispatch';
import { createLogger } from '../../src/log.js';
import { startWeb, type RunningWeb } from '../../src/main/web.js';
import type { TestDatabase } from '../support/postgres.js';
import type { TestRedis } from '../support/redis.js';
import { SHOPIFY_DOMAIN, SHOPIFY_SHOP_ID, startBackingStack, WOO_SHOP_ID, type TestSecrets } from '../support/stack.js';
import { signShopify, signWoo } from '../support/factories.js';

export { SHOPIFY_DOMAIN, SHOPIFY_SHOP_ID, WOO_SHOP_ID };

/** Small budgets keep the slow-service tests short. */
export const TEST_BUDGET_MS = 500;
/** The dispatch client's timeout here: a call that outlives the budget has time to finish and warm the cache. */
export const DISPATCH_TIMEOUT_MS = 5_000;
/**
 * An answer must come within the budget plus this: the time to write it and cross loopback, with room for a busy
 * shared machine. Far below SLOW_SERVICE_MS, so an answer that waited for the slow service cannot pass.
 */
export const ANSWER_MARGIN_MS = 300;
/** The emulator's latency in the slow-service tests: three times the budget, well within the dispatch timeout. */
export const SLOW_SERVICE_MS = 1_500;
export const FLAT_RATE_XOF = 2_000;

export const SHOPIFY_FLAT_SHOP_ID = 'dakar-flat';
export const SHOPIFY_FLAT_DOMAIN = 'dakar-flat.myshopify.com';
export const SHOPIFY_OFF_SHOP_ID = 'dakar-off';
export const WOO_FLAT_SHOP_ID = 'abidjan-flat';
/** Same Dakar shop, with a maximum rate of CAPPED_MAX_XOF. */
export const SHOPIFY_CAPPED_SHOP_ID = 'dakar-capped';
export const CAPPED_MAX_XOF = 2_500;
/** Same Dakar shop, mostly prepaid: includeCodFee false. */
export const SHOPIFY_PREPAID_SHOP_ID = 'dakar-prepaid';
/** A WooCommerce shop whose checkout plugin has its own secret (woocommerce.checkoutSecret). */
export const WOO_OWN_SECRET_SHOP_ID = 'abidjan-plugin';

export interface LogLine {
  level: number;
  msg: string;
  [key: string]: unknown;
}

export interface CheckoutStack {
  redis: TestRedis;
  /** The ledger's schema (run-time aliases live there). */
  db: TestDatabase;
  emulator: DispatchEmulator;
  shops: ShopRegistry;
  secrets: TestSecrets;
  /** The checkout secret of WOO_OWN_SECRET_SHOP_ID. */
  wooCheckoutSecret: string;
  web: RunningWeb;
  prefix: string;
  logs: LogLine[];
  /** POSTs a Shopify rate request, signed as Shopify signs it (or with the given headers). */
  shopifyRates(
    shopId: string,
    body: unknown,
    options?: { secret?: string; headers?: Record<string, string | null> },
  ): Promise<Answer>;
  wooRates(
    shopId: string,
    body: unknown,
    options?: { secret?: string; headers?: Record<string, string | null> },
  ): Promise<Answer>;
  /** How many simulatePrice calls the emulator has received so far. */
  simulateCalls(): number;
  /** How many createQuote calls the emulator has received so far. */
  quoteCalls(): number;
  stop(): Promise<void>;
}

export interface Answer {
  status: number;
  body: unknown;
  ms: number;
}

export interface CheckoutStackOptions {
  /** Gazetteer names the emulated service prices at the fallback tariff, as it prices a city name. */
  unpricedNeighbourhoods?: string[];
}

export async function startCheckoutStack(options: CheckoutStackOptions = {}): Promise<CheckoutStack> {
  const wooCheckoutSecret = randomBytes(32).toString('hex');
  const backing = await startBackingStack({
    emulator: options.unpricedNeighbourhoods ? { unpricedNeighbourhoods: options.unpricedNeighbourhoods } : {},
    extraEnv: { T_WOO_CHECKOUT_SECRET: wooCheckoutSecret },
  });
  const { redis, db, secrets, emulator } = backing;
  const base = backing.registryDocument({ policy: { checkoutRates: { budgetMs: TEST_BUDGET_MS } } }) as {
    shops: Record<string, unknown>[];
  };
  for (const shop of base.shops)
    shop.dispatch = { ...(shop.dispatch as Record<string, unknown>), timeoutMs: DISPATCH_TIMEOUT_MS };
  const [shopifyShop, wooShop] = base.shops as [Record<string, unknown>, Record<string, unknown>];
  const variant = (
    shop: Record<string, unknown>,
    id: string,
    checkoutRates: Record<string, unknown>,
    extra: Record<string, unknown> = {},
  ) => ({
    ...structuredClone(shop),
    id,
    ...extra,
    policy: { checkoutRates: { budgetMs: TEST_BUDGET_MS, ...checkoutRates } },
  });
  const document = {
    shops: [
      shopifyShop,
      variant(
        shopifyShop,
        SHOPIFY_FLAT_SHOP_ID,
        { fallback: { mode: 'rate', amountXof: FLAT_RATE_XOF }, deliveryDays: { min: 0, max: 1 } },
        {
          shopify: { ...(shopifyShop.shopify as Record<string, unknown>), domain: SHOPIFY_FLAT_DOMAIN },
        },
      ),
      variant(
        shopifyShop,
        SHOPIFY_OFF_SHOP_ID,
        { enabled: false },
        {
          shopify: { ...(shopifyShop.shopify as Record<string, unknown>), domain: 'dakar-off.myshopify.com' },
        },
      ),
      variant(
        shopifyShop,
        SHOPIFY_CAPPED_SHOP_ID,
        { maxRateXof: CAPPED_MAX_XOF },
        {
          shopify: { ...(shopifyShop.shopify as Record<string, unknown>), domain: 'dakar-capped.myshopify.com' },
        },
      ),
      variant(
        shopifyShop,
        SHOPIFY_PREPAID_SHOP_ID,
        { includeCodFee: false },
        {
          shopify: { ...(shopifyShop.shopify as Record<string, unknown>), domain: 'dakar-prepaid.myshopify.com' },
        },
      ),
      wooShop,
      variant(wooShop, WOO_FLAT_SHOP_ID, { fallback: { mode: 'rate', amountXof: FLAT_RATE_XOF } }),
      variant(
        wooShop,
        WOO_OWN_SECRET_SHOP_ID,
        {},
        {
          woocommerce: {
            ...(wooShop.woocommerce as Record<string, unknown>),
            checkoutSecret: { env: 'T_WOO_CHECKOUT_SECRET' },
          },
        },
      ),
    ],
  };
  const shops = backing.shopsFrom(document);
  const logs: LogLine[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n')) if (line.trim()) logs.push(JSON.parse(line) as LogLine);
      done();
    },
  });
  const logger = createLogger({ level: 'info', destination: sink });
  const { prefix } = backing;
  const web = await startWeb({
    redisUrl: redis.url,
    prefix,
    shops,
    logger,
    port: 0,
    databaseUrl: db.url,
    databaseSchema: db.schema,
  });

  const post = async (
    path: string,
    body: unknown,
    headerName: string,
    sign: (raw: string) => string,
    headers: Record<string, string | null> = {},
  ): Promise<Answer> => {
    const raw = typeof body === 'string' ? body : JSON.stringify(body);
    const all: Record<string, string | null> = {
      'Content-Type': 'application/json',
      [headerName]: sign(raw),
      ...headers,
    };
    const started = performance.now();
    const response = await fetch(`${web.url}${path}`, {
      method: 'POST',
      headers: Object.fromEntries(Object.entries(all).filter((e): e is [string, string] => e[1] !== null)),
      body: raw,
    });
    const text = await response.text();
    const ms = performance.now() - started;
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // keep the text
    }
    return { status: response.status, body: parsed, ms };
  };

  return {
    redis,
    db,
    emulator,
    shops,
    secrets,
    wooCheckoutSecret,
    web,
    prefix,
    logs,
    shopifyRates: (shopId, body, options = {}) => {
      const shop = shops.get(shopId);
      const domain = shop?.platform === 'shopify' ? shop.shopify.domain : SHOPIFY_DOMAIN;
      return post(
        `/checkout/shopify/${shopId}/rates`,
        body,
        'X-Shopify-Hmac-Sha256',
        (raw) => signShopify(raw, options.secret ?? secrets.shopifyClientSecret),
        {
          'X-Shopify-Shop-Domain': domain,
          ...options.headers,
        },
      );
    },
    wooRates: (shopId, body, options = {}) =>
      post(
        `/checkout/woocommerce/${shopId}/rates`,
        body,
        'X-Relais-Signature',
        (raw) => signWoo(raw, options.secret ?? secrets.wooWebhookSecret),
        options.headers,
      ),
    simulateCalls: () => emulator.calls().filter((c) => c.operation === 'simulatePrice').length,
    quoteCalls: () => emulator.calls().filter((c) => c.operation === 'createQuote').length,
    async stop() {
      await web.close().catch(() => undefined);
      await backing.stop();
    },
  };
}

/** Waits until `check` holds, polling; fails with `what` after `timeoutMs`. */
export async function eventually(
  check: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs = 5_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
