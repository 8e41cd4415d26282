/**
 * `relais doctor` against real parts: private redis-servers configured well and badly, the dispatch emulator,
 * the Shopify emulator (Admin GraphQL executed on the real 2026-10 schema) and the WooCommerce emulator, with
 * a running Relais web process as RELAIS_PUBLIC_URL so the webhooks doctor registers are proven to deliver.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getVariableValues, parse, validate, type OperationDefinitionNode } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildShopRegistry, type ShopConfig } from '../../src/shops/shops.js';
import { loadAdminSchema, startShopifyEmulator, type ShopifyEmulator } from '@relais/emulators/shopify';
import { startWooEmulator, type WooEmulator } from '@relais/emulators/woocommerce';
import { NeighbourhoodResolver } from '../../src/geo/resolver.js';
import { renderReport, runDoctor, type DoctorReport, type ReportEntry } from '../../src/ops/doctor.js';
import { checkAliases, checkPickup, checkRedis } from '../../src/ops/doctor-checks.js';
import { DOCTOR_SHOPIFY_DOCUMENTS } from '../../src/adapters/shopify/doctor.js';
import { handleUninstall, uninstalledKey } from '../../src/shops/uninstall.js';
import { PostgresShopDirectory } from '../../src/adapters/postgres/pg-shops.js';
import { silentLogger } from '../../src/log.js';
import { freePort, startRedis, type TestRedis } from '../support/redis.js';
import {
  makeSecrets,
  randomHex,
  SHOPIFY_DOMAIN,
  SHOPIFY_SHOP_ID,
  startTestRelais,
  WOO_SHOP_ID,
  type TestRelais,
  type TestSecrets,
} from '../support/relais.js';

const EUR_DOMAIN = 'paris-mode.myshopify.com';
const dir = mkdtempSync(join(tmpdir(), 'relais-doctor-'));
const secrets: TestSecrets = makeSecrets();
const eurToken = `shpat_test_${randomHex(8)}`;
let goodRedis: TestRedis;
let lruRedis: TestRedis;
let noConfigRedis: TestRedis;
let shopify: ShopifyEmulator;
let woo: WooEmulator;
let relais: TestRelais;
/** Every report printed in this file, to check no secret ever reached one. */
const printed: string[] = [];

beforeAll(async () => {
  [goodRedis, lruRedis, noConfigRedis] = await Promise.all([
    startRedis({ extraArgs: ['--maxmemory-policy', 'noeviction', '--appendonly', 'yes', '--dir', dir] }),
    startRedis({ extraArgs: ['--maxmemory-policy', 'allkeys-lru'] }),
    // As managed Redis does: CONFIG is renamed away.
    startRedis({ extraArgs: ['--rename-command', 'CONFIG', `CONFIG_${randomHex(6)}`] }),
  ]);
  [shopify, woo] = await Promise.all([
    startShopifyEmulator({
      shops: [
        { domain: SHOPIFY_DOMAIN, accessToken: secrets.shopifyAccessToken, clientSecret: secrets.shopifyClientSecret },
        { domain: EUR_DOMAIN, accessToken: eurToken, clientSecret: secrets.shopifyClientSecret, currency: 'EUR' },
      ],
    }),
    startWooEmulator({
      shops: [{ id: WOO_SHOP_ID, consumerKey: secrets.wooConsumerKey, consumerSecret: secrets.wooConsumerSecret }],
    }),
  ]);
  relais = await startTestRelais({
    secrets,
    shopifyAdminUrl: shopify.adminUrl(SHOPIFY_DOMAIN),
    wooUrl: woo.siteUrl(WOO_SHOP_ID),
    inProcessWorker: false,
  });
});

afterAll(async () => {
  await woo?.settled();
  await shopify?.webhooksSettled();
  await relais?.stop();
  await Promise.all([shopify?.close(), woo?.close(), goodRedis?.stop(), lruRedis?.stop(), noConfigRedis?.stop()]);
  rmSync(dir, { recursive: true, force: true });
});

// ---- helpers -------------------------------------------------------------------------------------------------

type Env = Record<string, string | undefined>;

function baseEnv(): Env {
  return { ...relais.env, REDIS_URL: goodRedis.url, RELAIS_PUBLIC_URL: relais.web.url, LOG_LEVEL: 'silent' };
}

function writeRegistry(document: unknown): string {
  const file = join(dir, `shops-${randomHex(4)}.json`);
  writeFileSync(file, JSON.stringify(document));
  return file;
}

async function doctor(options: { document?: unknown; env?: Env; fix?: boolean } = {}): Promise<DoctorReport> {
  const env = {
    ...baseEnv(),
    RELAIS_SHOPS_FILE: writeRegistry(options.document ?? relais.registryDocument),
    ...options.env,
  };
  const report = await runDoctor({ env, fix: options.fix, timeoutMs: 3_000 });
  printed.push(renderReport(report), JSON.stringify(report));
  return report;
}

function entry(report: DoctorReport, sectionStart: string, name: string): ReportEntry {
  const found = report.checks.find((c) => c.section.startsWith(sectionStart) && c.name === name);
  if (!found) throw new Error(`no check "${name}" in "${sectionStart}": ${renderReport(report)}`);
  return found;
}

const SHOPIFY = `Shop ${SHOPIFY_SHOP_ID}`;
const WOO = `Shop ${WOO_SHOP_ID}`;

/** The test registry's Shopify shop, renamed and pointed at another emulated shop. */
function withShop(extra: Record<string, unknown>): unknown {
  const document = structuredClone(relais.registryDocument) as { shops: Record<string, unknown>[] };
  document.shops.push(extra);
  return document;
}

// ---- tests ---------------------------------------------------------------------------------------------------

describe('relais doctor on a fresh setup', () => {
  it('reports the missing webhooks, --fix registers them, and the next run is all ✔', async () => {
    const first = await doctor();
    expect(first.ok).toBe(false);
    const shopifyHooks = entry(first, SHOPIFY, 'webhook subscriptions');
    expect(shopifyHooks.status).toBe('error');
    expect(shopifyHooks.detail).toContain('orders/create, orders/paid, orders/updated, orders/cancelled');
    expect(shopifyHooks.fix).toMatch(/--fix/);
    expect(entry(first, WOO, 'webhooks')).toMatchObject({ status: 'error' });
    expect(entry(first, WOO, 'webhooks').detail).toMatch(/order\.created is missing; order\.updated is missing/);
    expect(entry(first, SHOPIFY, 'carrier service (checkout rates)').status).toBe('warn');
    // What is right is said to be right.
    for (const [section, name] of [
      ['Configuration', 'environment'],
      ['Configuration', 'shop registry'],
      ['Redis', 'reachable'],
      ['Redis', 'persistence'],
      ['Redis', 'maxmemory-policy'],
      [SHOPIFY, 'dispatch key'],
      [SHOPIFY, 'shop credentials'],
      [SHOPIFY, 'currency'],
      [SHOPIFY, 'pickup neighbourhood'],
      [WOO, 'dispatch key'],
      [WOO, 'shop credentials'],
      [WOO, 'currency'],
      [WOO, 'pickup neighbourhood'],
    ] as const) {
      expect(entry(first, section, name).status, `${section} ${name}`).toBe('ok');
    }

    const fixed = await doctor({ fix: true });
    expect(fixed.ok).toBe(true);
    expect(entry(fixed, SHOPIFY, 'webhook subscriptions').detail).toMatch(
      /^registered orders\/create, orders\/paid, orders\/updated, orders\/cancelled/,
    );
    expect(entry(fixed, WOO, 'webhooks').detail).toMatch(
      /registered order\.created, registered order\.updated, registered order\.deleted, registered order\.restored/,
    );
    expect(entry(fixed, SHOPIFY, 'carrier service (checkout rates)')).toMatchObject({ status: 'ok' });
    const shopifyUrl = `${relais.web.url}/webhooks/shopify`;
    expect(
      shopify
        .webhookSubscriptions(SHOPIFY_DOMAIN)
        .map((s) => `${s.topic} ${s.uri}`)
        .sort(),
    ).toEqual(
      ['APP_UNINSTALLED', 'ORDERS_CANCELLED', 'ORDERS_CREATE', 'ORDERS_PAID', 'ORDERS_UPDATED'].map(
        (t) => `${t} ${shopifyUrl}`,
      ),
    );
    const wooUrl = `${relais.web.url}/webhooks/woocommerce/${WOO_SHOP_ID}`;
    expect(
      woo
        .webhooks(WOO_SHOP_ID)
        .map((w) => `${w.topic} ${w.status} ${w.deliveryUrl}`)
        .sort(),
    ).toEqual(
      ['order.created', 'order.deleted', 'order.restored', 'order.updated'].map((t) => `${t} active ${wooUrl}`),
    );

    const again = await doctor();
    expect(again.ok).toBe(true);
    expect(again.counts).toMatchObject({ error: 0, warn: 0 });
    expect(again.checks.filter((c) => c.status !== 'ok')).toEqual([]);
    expect(renderReport(again)).toMatch(/All good: \d+ checks passed\.\n$/);
  });

  it('the webhooks it registered deliver orders that Relais accepts (right URL, right WooCommerce secret)', async () => {
    const before = await relais.web.runtime.queues.shopEvents.getJobCounts('waiting');
    await woo.createOrder(WOO_SHOP_ID);
    shopify.createOrder(SHOPIFY_DOMAIN);
    await Promise.all([woo.settled(), shopify.webhooksSettled()]);
    const wooEvents = woo.deliveries().filter((d) => d.kind === 'event');
    expect(wooEvents.length).toBeGreaterThan(0);
    expect(wooEvents.map((d) => d.status)).toEqual(wooEvents.map(() => 200));
    const shopifyEvents = shopify.webhookDeliveries().filter((d) => d.url === `${relais.web.url}/webhooks/shopify`);
    expect(shopifyEvents.length).toBeGreaterThan(0);
    expect(shopifyEvents.map((d) => d.status)).toEqual(shopifyEvents.map(() => 200));
    const after = await relais.web.runtime.queues.shopEvents.getJobCounts('waiting');
    expect(after.waiting).toBeGreaterThan(before.waiting ?? 0);
  });

  it('a WooCommerce webhook disabled after failed deliveries is reported, and --fix re-activates it', async () => {
    const created = woo.webhooks(WOO_SHOP_ID).find((w) => w.topic === 'order.created');
    await woo.updateWebhook(WOO_SHOP_ID, created!.id, { status: 'disabled' });
    const report = await doctor();
    expect(entry(report, WOO, 'webhooks')).toMatchObject({ status: 'error' });
    expect(entry(report, WOO, 'webhooks').detail).toMatch(
      /order\.created is disabled \(WooCommerce disables a webhook after repeated failed deliveries\)/,
    );
    const fixed = await doctor({ fix: true });
    expect(entry(fixed, WOO, 'webhooks')).toMatchObject({
      status: 'ok',
      detail: expect.stringMatching(/^re-activated order\.created/),
    });
    expect(woo.webhooks(WOO_SHOP_ID).find((w) => w.id === created!.id)?.status).toBe('active');
    expect(woo.webhooks(WOO_SHOP_ID)).toHaveLength(4);
  });
});

describe('relais doctor explains what is wrong', () => {
  it('an unknown dispatch key (401), a revoked Shopify token and a wrong WooCommerce secret, each with what to do', async () => {
    const unknownKey = `pk_live_${randomHex()}`;
    const wrongToken = `shpat_test_${randomHex(8)}`;
    const wrongSecret = `cs_test_${randomHex(8)}`;
    const report = await doctor({
      env: { T_DISPATCH_API_KEY: unknownKey, T_SHOPIFY_ACCESS_TOKEN: wrongToken, T_WOO_CONSUMER_SECRET: wrongSecret },
    });
    expect(report.ok).toBe(false);
    const key = entry(report, SHOPIFY, 'dispatch key');
    expect(key.status).toBe('error');
    expect(key.detail).toMatch(/^pk_live_… \(from environment variable T_DISPATCH_API_KEY\) was refused by .* \(401/);
    expect(key.fix).toMatch(/mistyped, revoked/);
    expect(entry(report, SHOPIFY, 'shop credentials')).toMatchObject({
      status: 'error',
      detail: expect.stringMatching(/Shopify refused the access token shpat_… .*\(401\)/),
    });
    expect(entry(report, WOO, 'shop credentials')).toMatchObject({
      status: 'error',
      detail: expect.stringMatching(/WooCommerce refused the REST key ck_… .*\(401/),
    });
    // Nothing more is tried with credentials that were refused.
    expect(report.checks.some((c) => c.section.startsWith(SHOPIFY) && c.name === 'webhook subscriptions')).toBe(false);
    const text = renderReport(report);
    for (const secret of [unknownKey, wrongToken, wrongSecret]) expect(text).not.toContain(secret);
  });

  it('a shop selling in EUR is an error that says why Relais cannot ship its orders', async () => {
    const document = withShop({
      id: 'paris-mode',
      name: 'Paris Mode',
      platform: 'shopify',
      country: 'SN',
      shopify: {
        domain: EUR_DOMAIN,
        accessToken: { env: 'T_EUR_TOKEN' },
        webhookSecret: { env: 'T_SHOPIFY_CLIENT_SECRET' },
        adminUrl: shopify.adminUrl(EUR_DOMAIN),
      },
      dispatch: {
        apiKey: { env: 'T_DISPATCH_API_KEY' },
        baseUrl: relais.emulator.baseUrl,
        webhookToken: { env: 'T_DISPATCH_WEBHOOK_TOKEN' },
      },
      pickup: { neighbourhood: 'Plateau', address: '1 rue X', contactName: 'A B', contactPhone: '+221770000009' },
      policy: { checkoutRates: { enabled: false } },
    });
    const report = await doctor({ document, env: { T_EUR_TOKEN: eurToken, RELAIS_PUBLIC_URL: undefined } });
    const currency = entry(report, 'Shop paris-mode', 'currency');
    expect(currency.status).toBe('error');
    expect(currency.detail).toMatch(
      /sells in EUR: the delivery service collects XOF only, so Relais holds every order/,
    );
    expect(currency.fix).toMatch(/Store currency/);
    expect(entry(report, 'Shop paris-mode', 'shop credentials').status).toBe('ok');
    expect(report.ok).toBe(false);
  });

  it("prints each shop's delivery-webhook URL (its token named by where it comes from, never shown) and the signature header the wire profile verifies", async () => {
    const document = structuredClone(relais.registryDocument) as { shops: { dispatch: Record<string, unknown> }[] };
    document.shops[0]!.dispatch = {
      ...document.shops[0]!.dispatch,
      webhookSigningSecret: { env: 'T_DISPATCH_WEBHOOK_TOKEN' },
    };
    const report = await doctor({ document });
    const shopifyHook = entry(report, SHOPIFY, 'delivery webhook');
    expect(shopifyHook.status).toBe('ok');
    expect(shopifyHook.detail).toContain(
      `${relais.web.url}/webhooks/dispatch/dakar-mode/<dispatch.webhookToken from environment variable T_DISPATCH_WEBHOOK_TOKEN>`,
    );
    expect(shopifyHook.detail).toMatch(
      /wire profile "default"; signature checked in header X-Dispatch-Signature \(sha256=, hex HMAC-SHA256\)/,
    );
    expect(entry(report, WOO, 'delivery webhook').detail).toMatch(
      /no signature checked \(set dispatch\.webhookSigningSecret to check header X-Dispatch-Signature\)/,
    );
    expect(JSON.stringify(report)).not.toContain(relais.secrets.dispatchWebhookToken);
  });

  it('without RELAIS_PUBLIC_URL the webhook checks say they need it', async () => {
    const report = await doctor({ env: { RELAIS_PUBLIC_URL: undefined } });
    expect(entry(report, 'Configuration', 'RELAIS_PUBLIC_URL')).toMatchObject({
      status: 'warn',
      detail: expect.stringMatching(/cannot be checked without it/),
    });
    expect(report.checks.filter((c) => /webhook|carrier/.test(c.name))).toEqual([]);
  });

  it('every problem of the registry is listed, and a pk_test_ key is shown as a dispatch key problem', async () => {
    const document = structuredClone(relais.registryDocument) as { shops: { dispatch: Record<string, unknown> }[] };
    // The two shops share one dispatch block: the WooCommerce shop gets its own.
    document.shops[1]!.dispatch = { ...document.shops[1]!.dispatch, apiKey: { env: 'T_MISSING_VARIABLE' } };
    const report = await doctor({ document, env: { T_DISPATCH_API_KEY: `pk_test_${randomHex()}` } });
    const problems = report.checks.filter((c) => c.status === 'error' && c.section === 'Configuration');
    expect(problems.map((p) => p.name).sort()).toEqual(['dispatch key of dakar-mode', 'shop registry']);
    expect(problems.find((p) => p.name === 'shop registry')?.detail).toMatch(
      /shops\.1\.dispatch\.apiKey: environment variable T_MISSING_VARIABLE is not set/,
    );
    expect(problems.find((p) => p.name === 'dispatch key of dakar-mode')?.detail).toMatch(
      /pk_test_ key.*403 SANDBOX_KEY_NOT_SUPPORTED/,
    );
    // Redis is still checked when the registry is not.
    expect(entry(report, 'Redis', 'reachable').status).toBe('ok');
  });

  it('a pickup that resolves to nothing and an alias to an unknown neighbourhood are errors; a pickup spelled loosely is a warning', () => {
    const resolver = NeighbourhoodResolver.load();
    const document = structuredClone(relais.registryDocument) as {
      shops: { pickup: { neighbourhood: string }; policy: Record<string, unknown> }[];
    };
    document.shops[0]!.pickup.neighbourhood = 'Rue 10';
    document.shops[0]!.policy = { neighbourhoodAliases: { Pyrotechnie: 'Sacré-Cœur', 'Zone Nulle Part': 'Atlantide' } };
    document.shops[1]!.pickup.neighbourhood = 'marcori';
    const shops = buildShopRegistry(document, (ref) => ('env' in ref ? relais.env[ref.env] : undefined));
    const shopifyShop = shops.get(SHOPIFY_SHOP_ID) as ShopConfig;
    const pickup = checkPickup(shopifyShop, resolver);
    expect(pickup).toMatchObject({
      status: 'error',
      detail: expect.stringMatching(/^"Rue 10" is not a neighbourhood Relais knows in SN/),
    });
    expect(pickup.fix).toContain('relais resolve "Rue 10" --country SN');
    const aliases = checkAliases(shopifyShop, resolver);
    expect(aliases.status).toBe('error');
    expect(aliases.detail).toMatch(/"Zone Nulle Part" → "Atlantide": .*not a neighbourhood in the gazetteer/);
    expect(aliases.detail).not.toContain('Pyrotechnie');
    expect(checkPickup(shops.get(WOO_SHOP_ID) as ShopConfig, resolver)).toMatchObject({
      status: 'warn',
      fix: expect.stringContaining('"Marcory"'),
    });
  });
});

describe('relais doctor on Redis', () => {
  it('Redis that may evict keys is an error; without persistence, a warning', async () => {
    const results = await checkRedis(lruRedis.url);
    expect(results.map((r) => [r.name, r.status])).toEqual([
      ['reachable', 'ok'],
      ['persistence', 'warn'],
      ['maxmemory-policy', 'error'],
    ]);
    expect(results[2]!.detail).toMatch(/^allkeys-lru: .*BullMQ key evicted/);
    expect(results[2]!.fix).toMatch(/CONFIG SET maxmemory-policy noeviction/);
  });

  it('a managed Redis without CONFIG is said to be unchecked, not wrong', async () => {
    const results = await checkRedis(noConfigRedis.url);
    expect(results.map((r) => [r.name, r.status])).toEqual([
      ['reachable', 'ok'],
      ['persistence and eviction', 'warn'],
    ]);
    expect(results[1]!.detail).toMatch(/^could not be checked: CONFIG is not available/);
  });

  it('Redis that does not answer is an error that says where it looked', async () => {
    const port = await freePort();
    const results = await checkRedis(`redis://:hunter2secret@127.0.0.1:${port}`, 1_000);
    expect(results).toHaveLength(1);
    expect(results[0]).toMatchObject({ name: 'reachable', status: 'error' });
    expect(results[0]!.detail).toContain(`redis://:***@127.0.0.1:${port}`);
    expect(results[0]!.detail).not.toContain('hunter2secret');
  });
});

describe('relais doctor, the command', () => {
  it('exits 0 with --json when all is good and 1 when something is wrong', async () => {
    const run = (env: Env) =>
      new Promise<{ code: number | null; stdout: string }>((resolve, reject) => {
        const child = spawn(join(process.cwd(), 'node_modules/.bin/tsx'), ['src/main/cli.ts', 'doctor', '--json'], {
          cwd: process.cwd(),
          env: {
            PATH: `${join(process.cwd(), 'node_modules/.bin')}:${process.env.PATH ?? ''}`,
            ...baseEnv(),
            RELAIS_SHOPS_FILE: writeRegistry(relais.registryDocument),
            ...env,
          },
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let stdout = '';
        child.stdout.on('data', (d: Buffer) => {
          stdout += d.toString();
        });
        child.once('error', reject);
        child.once('exit', (code) => resolve({ code, stdout }));
      });
    const unknownKey = `pk_live_${randomHex()}`;
    const [good, bad] = await Promise.all([run({}), run({ T_DISPATCH_API_KEY: unknownKey })]);
    expect(good.code).toBe(0);
    expect((JSON.parse(good.stdout) as DoctorReport).ok).toBe(true);
    expect(bad.code).toBe(1);
    const report = JSON.parse(bad.stdout) as DoctorReport;
    expect(
      report.checks
        .filter((c) => c.status === 'error')
        .map((c) => `${c.section.split(' ')[1]} ${c.name}`)
        .sort(),
    ).toEqual([`${WOO_SHOP_ID} dispatch key`, `${SHOPIFY_SHOP_ID} dispatch key`].sort());
    expect(bad.stdout).not.toContain(unknownKey);
    printed.push(good.stdout, bad.stdout);
  }, 90_000);
});

describe('what relais doctor sends and prints', () => {
  it('sends Shopify only documents and variables that Admin GraphQL 2026-10 accepts', async () => {
    const { schema } = await loadAdminSchema('2026-10');
    const samples: Record<keyof typeof DOCTOR_SHOPIFY_DOCUMENTS, Record<string, unknown>> = {
      shop: {},
      customerDataScopes: {},
      customerDataOrders: { first: 5 },
      webhookSubscriptions: { after: null },
      webhookSubscriptionCreate: {
        topic: 'ORDERS_PAID',
        webhookSubscription: { uri: 'https://relais.example.com/webhooks/shopify', format: 'JSON' },
      },
    };
    for (const [name, query] of Object.entries(DOCTOR_SHOPIFY_DOCUMENTS)) {
      const document = parse(query);
      const operation = document.definitions[0] as OperationDefinitionNode;
      const problems = [
        ...validate(schema, document).map((e) => e.message),
        ...(
          getVariableValues(schema, operation.variableDefinitions ?? [], samples[name as keyof typeof samples])
            .errors ?? []
        ).map((e) => e.message),
      ];
      expect(problems, name).toEqual([]);
    }
  });

  it('never prints a key, token or secret', () => {
    expect(printed.length).toBeGreaterThan(5);
    const all = printed.join('\n');
    for (const secret of Object.values(secrets)) expect(all).not.toContain(secret);
    expect(all).not.toContain(eurToken);
  });
});

describe('a registry-file shop whose app was uninstalled', () => {
  it('the uninstall is marked (the file is left alone), doctor reports it, and --fix forgets it once the shop checks pass', async () => {
    const registry = buildShopRegistry(relais.registryDocument, (ref) =>
      'env' in ref ? relais.env[ref.env] : undefined,
    );
    const outcome = await handleUninstall(registry.get(SHOPIFY_SHOP_ID)!, {
      directory: new PostgresShopDirectory(relais.db.pool()),
      announce: () => Promise.reject(new Error('a registry-file shop is not announced')),
      redis: goodRedis.client(),
      prefix: '{relais}', // RELAIS_REDIS_PREFIX's default, which doctor reads here
      now: () => new Date('2026-11-20T10:00:00.000Z'),
      logger: silentLogger,
    });
    expect(outcome).toEqual({ kind: 'registry_file_shop', marked: '2026-11-20T10:00:00.000Z' });

    const reported = entry(await doctor(), SHOPIFY, 'app installed');
    expect(reported.status).toBe('error');
    expect(reported.detail).toContain('uninstalled from this shop at 2026-11-20T10:00:00.000Z');
    expect(reported.fix).toMatch(/remove the shop from the registry file/);

    // The emulated shop still accepts its token: its checks pass, so the uninstall is taken as undone.
    expect(entry(await doctor({ fix: true }), SHOPIFY, 'app installed').status).toBe('ok');
    expect(await goodRedis.client().exists(uninstalledKey('{relais}', SHOPIFY_SHOP_ID))).toBe(0);
    expect((await doctor()).checks.some((c) => c.name === 'app installed')).toBe(false);
  });
});
