#!/usr/bin/env node
/**
 * `relais <command>`: the one command line. Each subcommand is a composition root: it reads the
 * environment (config/env.ts), builds what it needs, runs, and shuts down cleanly on SIGTERM/SIGINT.
 */
import type { PricedNames } from '../geo/types.js';
import { serviceId } from '../jobs/tariff-guard.js';
import { describeCandidates } from '../jobs/name-choice.js';
import { learnMap, mapLearnDeps } from '../ops/map-learn.js';
import { describeCoverage, mapCoverage } from '../ops/map-report.js';
import { candidatesOf } from '../geo/candidates.js';
import { existsSync, readFileSync } from 'node:fs';
import { Command } from 'commander';
import { rawEnvironment, readEnv } from '../config/env.js';
import {
  assertWebhookTokens,
  defaultSecretSourceFor,
  loadShopRegistry,
  readRegistryDocument,
  type ShopRegistry,
} from '../config/shops.js';
import { loadServedShops, prepareImport } from '../config/shop-directory.js';
import { PostgresShopDirectory } from '../ledger/postgres/pg-shops.js';
import { allHeldOrders } from '../ledger/order-ledger.js';
import { explainResolution, NeighbourhoodResolver } from '../geo/resolver.js';
import { replayOrder, replayOutcome } from '../jobs/replay.js';
import { createLogger } from '../log.js';
import { runDisputeList, runDisputeOpen } from '../disputes/command.js';
import { runReconcileCommand } from '../reconcile/command.js';
import { renderReport, reportJson, runDoctor } from '../ops/doctor.js';
import { runProbeCommand } from '../ops/probe-command.js';
import { runStaleCommand } from '../ops/stale.js';
import { userInfo } from 'node:os';
import type { EmulateOptions } from './emulate.js';
import { SecretBox } from '../config/secret-box.js';
import { Secret } from '../config/secret.js';
import { createPool, databaseUrlForHumans, migrate } from '../ledger/postgres/database.js';
import { PostgresShopSecretStore } from '../ledger/postgres/pg-shop-secrets.js';
import { createRuntime, waitForDatabase } from './runtime.js';
import { startWeb } from './web.js';
import { startWorker } from './worker.js';
import { connectRedis, parseClusterNodes } from '../redis.js';
import { announceShopsChanged } from '../config/served-shops.js';

/** package.json's version: two levels up from src/main (tsx), three from dist/src/main (the build). */
function packageVersion(): string {
  for (const up of ['../../package.json', '../../../package.json']) {
    try {
      const pkg = JSON.parse(readFileSync(new URL(up, import.meta.url), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'relais' && pkg.version) return pkg.version;
    } catch {
      // not at this level
    }
  }
  return 'unknown';
}

const program = new Command()
  .name('relais')
  .description(
    'Connects Shopify and WooCommerce shops to a last-mile delivery and cash-on-delivery service (XOF zone).',
  )
  .version(
    `relais ${packageVersion()} (Node ${process.versions.node})`,
    '-V, --version',
    'print the version of Relais and of Node',
  );

/**
 * The environment, the logger and the shops served: the registry file's, and with RELAIS_SECRET_KEYS set (the
 * key that opens connected shops' secrets) the database's connected shops too. Without the file (its default
 * path absent) the connected shops alone.
 */
async function baseOptions() {
  const env = readEnv();
  const logger = createLogger({ level: env.LOG_LEVEL });
  const served = env.RELAIS_SECRET_KEYS ? await servedShops(env, logger) : undefined;
  const shops = served?.shops ?? loadShopRegistry(env.RELAIS_SHOPS_FILE);
  return {
    env,
    logger,
    shops,
    // With connected shops, web and worker serve them live: reloaded when one is connected, changed or switched off.
    ...(served ? { liveShops: { ...(served.fileDocument ? { fileDocument: served.fileDocument } : {}) } } : {}),
    redisUrl: env.REDIS_URL,
    redisClusterNodes: parseClusterNodes(env.REDIS_CLUSTER_NODES),
    prefix: env.RELAIS_REDIS_PREFIX,
    retentionDays: env.RELAIS_RETENTION_DAYS,
    redisWaitMs: env.RELAIS_REDIS_WAIT_MS,
    databaseUrl: env.DATABASE_URL,
    databaseSchema: env.RELAIS_DB_SCHEMA,
    databaseWaitMs: env.RELAIS_DB_WAIT_MS,
    ...(env.RELAIS_SECRET_KEYS === undefined ? {} : { secretKeys: env.RELAIS_SECRET_KEYS }),
  };
}

async function servedShops(
  env: ReturnType<typeof readEnv>,
  logger: ReturnType<typeof createLogger>,
): Promise<{ shops: ShopRegistry; fileDocument?: { shops: unknown[] } }> {
  const fileGiven = rawEnvironment().RELAIS_SHOPS_FILE !== undefined || existsSync(env.RELAIS_SHOPS_FILE);
  const fileDocument = fileGiven ? (readRegistryDocument(env.RELAIS_SHOPS_FILE) as { shops: unknown[] }) : undefined;
  const pool = createPool({ url: env.DATABASE_URL, schema: env.RELAIS_DB_SCHEMA, poolSize: 1 });
  try {
    await waitForDatabase(pool, { url: env.DATABASE_URL, waitMs: env.RELAIS_DB_WAIT_MS, logger });
    const registry = await loadServedShops({
      ...(fileDocument ? { fileDocument } : {}),
      directory: new PostgresShopDirectory(pool),
      secrets: new PostgresShopSecretStore(pool, SecretBox.fromSetting(env.RELAIS_SECRET_KEYS!)),
    });
    return { shops: assertWebhookTokens(registry), ...(fileDocument ? { fileDocument } : {}) };
  } finally {
    await pool.end();
  }
}

/** Tells the running web processes and workers the connected shops changed; they reload within a minute anyway. */
async function announceFromCli(env: ReturnType<typeof readEnv>): Promise<string> {
  const redis = connectRedis(
    { redisUrl: env.REDIS_URL, redisClusterNodes: parseClusterNodes(env.REDIS_CLUSTER_NODES) },
    { maxRetriesPerRequest: 1, connectTimeout: 2_000, commandTimeout: 3_000 },
  );
  redis.on('error', () => undefined);
  try {
    await announceShopsChanged(redis, env.RELAIS_REDIS_PREFIX);
    return 'Running web processes and workers were told: they serve the change now.';
  } catch {
    return 'Redis did not answer: running web processes and workers pick the change up within a minute.';
  } finally {
    redis.disconnect();
  }
}

/** Runs `close` once on SIGTERM or SIGINT, then exits. */
function onShutdown(close: () => Promise<void>, logger: { info(msg: string): void }): void {
  let closing = false;
  const handler = (signal: string) => {
    if (closing) return;
    closing = true;
    logger.info(`${signal} received: finishing in-flight work, then stopping`);
    close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on('SIGTERM', () => handler('SIGTERM'));
  process.on('SIGINT', () => handler('SIGINT'));
}

program
  .command('web')
  .description('Receive shop webhooks (Express) and enqueue them')
  .action(async () => {
    const base = await baseOptions();
    const web = await startWeb({
      ...base,
      host: base.env.RELAIS_HOST,
      port: base.env.PORT,
      dashboardToken: base.env.RELAIS_DASHBOARD_TOKEN,
      metricsToken: base.env.RELAIS_METRICS_TOKEN, // operations: /metrics behind a bearer token when set
      trustProxy: base.env.TRUST_PROXY,
      // The Shopify app install routes; env.ts made sure the four settings come together.
      ...(base.env.SHOPIFY_API_KEY && base.env.SHOPIFY_API_SECRET && base.env.RELAIS_PUBLIC_URL
        ? {
            shopifyApp: {
              clientId: base.env.SHOPIFY_API_KEY,
              clientSecret: new Secret(base.env.SHOPIFY_API_SECRET, 'env SHOPIFY_API_SECRET'),
              publicUrl: base.env.RELAIS_PUBLIC_URL,
            },
          }
        : {}),
      publicUrl: base.env.RELAIS_PUBLIC_URL,
    });
    onShutdown(() => web.close(), base.logger);
  });

program
  .command('worker')
  .description('Process shop events and dispatch orders (BullMQ worker)')
  .action(async () => {
    const base = await baseOptions();
    const worker = await startWorker({
      ...base,
      resolver: NeighbourhoodResolver.load(),
      concurrency: base.env.WORKER_CONCURRENCY,
      lockMs: base.env.RELAIS_WORKER_LOCK_MS,
      reconcileIntervalMs: base.env.RELAIS_RECONCILE_INTERVAL_MS,
      // operations: /metrics, /healthz, /readyz on the worker's own port
      metricsPort: base.env.RELAIS_WORKER_METRICS_PORT,
      metricsHost: base.env.RELAIS_HOST,
      metricsToken: base.env.RELAIS_METRICS_TOKEN,
    });
    onShutdown(() => worker.close(), base.logger);
  });

program
  .command('migrate')
  .description(
    "Bring the ledger's PostgreSQL schema up to this version of Relais (idempotent: applies only what is missing)",
  )
  .action(async () => {
    const env = readEnv();
    const where = databaseUrlForHumans(env.DATABASE_URL);
    const pool = createPool({ url: env.DATABASE_URL, schema: env.RELAIS_DB_SCHEMA });
    try {
      await waitForDatabase(pool, {
        url: env.DATABASE_URL,
        waitMs: env.RELAIS_DB_WAIT_MS,
        logger: createLogger({ level: env.LOG_LEVEL }),
      });
      const result = await migrate(pool, env.RELAIS_DB_SCHEMA);
      process.stdout.write(
        result.applied.length === 0
          ? `schema ${env.RELAIS_DB_SCHEMA} at ${where} is current (version ${result.to}); nothing to apply\n`
          : `schema ${env.RELAIS_DB_SCHEMA} at ${where}: applied ${result.applied.join(', ')}; now at version ${result.to}\n`,
      );
    } finally {
      await pool.end();
    }
  });

program
  .command('shops')
  .description(
    "Connected shops in the database: `import <file>` moves a registry file's shops there (secrets sealed), `list` shows them",
  )
  .argument('<action>', 'import | list')
  .argument('[file]', 'the registry file to import (import)')
  .action(async (action: string, file: string | undefined) => {
    const env = readEnv();
    if (!env.RELAIS_SECRET_KEYS)
      throw new Error(
        "RELAIS_SECRET_KEYS is not set: connected shops' secrets are sealed with it (openssl rand -base64 32, as id:base64)",
      );
    const pool = createPool({ url: env.DATABASE_URL, schema: env.RELAIS_DB_SCHEMA });
    const directory = new PostgresShopDirectory(pool);
    try {
      if (action === 'list') {
        for (const shop of await directory.list())
          process.stdout.write(`${shop.id}  ${shop.platform}  ${shop.enabled ? 'enabled' : 'disabled'}\n`);
        return;
      }
      if (action !== 'import' || !file) throw new Error('usage: relais shops import <file> | relais shops list');
      const secrets = new PostgresShopSecretStore(pool, SecretBox.fromSetting(env.RELAIS_SECRET_KEYS));
      const prepared = prepareImport(
        readRegistryDocument(file) as { shops: unknown[] },
        defaultSecretSourceFor(process.env),
      );
      for (const shop of prepared) {
        for (const [name, value] of shop.secrets) await secrets.put(shop.id, name, value);
        await directory.save({ id: shop.id, platform: shop.platform, document: shop.document });
        process.stdout.write(`imported ${shop.id} (${shop.platform}), ${shop.secrets.size} secret(s) sealed\n`);
      }
      process.stdout.write(
        `Remove these shops from ${file} (or stop pointing RELAIS_SHOPS_FILE at it): a shop defined in both is refused.\n`,
      );
      process.stdout.write(`${await announceFromCli(env)}\n`);
    } finally {
      await pool.end();
    }
  });

program
  .command('secrets')
  .description(
    "Connected shops' secrets in the database: `rotate` re-seals every one under the first key of RELAIS_SECRET_KEYS",
  )
  .argument('<action>', 'rotate')
  .action(async (action: string) => {
    if (action !== 'rotate') throw new Error(`unknown action "${action}": rotate`);
    const env = readEnv();
    if (!env.RELAIS_SECRET_KEYS)
      throw new Error('RELAIS_SECRET_KEYS is not set: list the new key first, then the old ones (id:base64,id:base64)');
    const box = SecretBox.fromSetting(env.RELAIS_SECRET_KEYS);
    const pool = createPool({ url: env.DATABASE_URL, schema: env.RELAIS_DB_SCHEMA });
    try {
      const resealed = await new PostgresShopSecretStore(pool, box).reseal();
      process.stdout.write(
        `re-sealed ${resealed} secret(s) under key ${box.currentKeyId}; keys listed after it can now be removed\n`,
      );
    } finally {
      await pool.end();
    }
  });

program
  .command('emulate')
  .description('Run a local emulator of a remote service: dispatch (the delivery service), shopify or woocommerce')
  .argument('<service>', 'dispatch | shopify | woocommerce')
  .option('--config <file>', 'JSON config (organisations or shops, keys referenced by environment variable)')
  .option('--host <host>', 'address to bind', '127.0.0.1')
  .option('--port <port>', 'port (dispatch default 4010, shopify 4020, woocommerce 4030)', (v) =>
    Number.parseInt(v, 10),
  )
  .option('--tracking-port <port>', 'dispatch: serve public tracking on its own port', (v) => Number.parseInt(v, 10))
  .option('--manual-clock', 'dispatch: couriers move only when told (POST /_emulator/advance)')
  .option('--step-ms <ms>', 'dispatch: time between courier stages in real-time mode (default 5000)', (v) =>
    Number.parseInt(v, 10),
  )
  .option(
    '--profile <file>',
    'dispatch: wire profile (JSON file or built-in name) whose dialect the emulator speaks (default: default)',
  )
  .option(
    '--zone-file <file>',
    'dispatch: the priced places (CSV country,name,band,lat,lon,covers); any other name gets the fallback tariff',
  )
  .option(
    '--product <name:price[:weight[:sku]]>',
    'woocommerce: a product to create in every shop, e.g. "Boubou wax:12500:0.8" (repeatable)',
    (value: string, previous: string[] = []) => [...previous, value],
  )
  .addHelpText('after', '\nConfig file formats, with examples: README, "Emulators: --config files".')
  .action(
    async (
      service: string,
      options: {
        config?: string;
        host: string;
        port?: number;
        trackingPort?: number;
        manualClock?: boolean;
        stepMs?: number;
        profile?: string;
        zoneFile?: string;
        product?: string[];
      },
    ) => {
      const env = readEnv();
      const logger = createLogger({ level: env.LOG_LEVEL, name: `emulate-${service}` });
      const print = (line: string) => process.stdout.write(`${line}\n`);
      const defaults: Record<string, number> = { dispatch: 4010, shopify: 4020, woocommerce: 4030 };
      const common: EmulateOptions = {
        config: options.config,
        host: options.host,
        port: options.port ?? defaults[service] ?? 0,
        trackingPort: options.trackingPort,
        realtime: !options.manualClock,
        stepMs: options.stepMs,
        profile: options.profile,
        ...(options.zoneFile !== undefined ? { zoneFile: options.zoneFile } : {}),
        products: options.product,
      };
      // Loaded only for this command, as the demo below: they load the emulators (src/main/emulators.ts).
      const { emulateDispatch, emulateShopify, emulateWooCommerce } = await import('./emulate.js');
      const start = { dispatch: emulateDispatch, shopify: emulateShopify, woocommerce: emulateWooCommerce }[service];
      if (!start) throw new Error(`unknown service "${service}": dispatch, shopify or woocommerce`);
      const running = await start(common, logger, print);
      onShutdown(() => running.close(), logger);
    },
  );

program
  .command('demo')
  .description('Run Relais end to end on this machine: emulated shops and courier, sample orders, a table of outcomes')
  .option('--once', 'stop after the outcome table')
  .option('--port <port>', 'port of the web process (default: any free port)', (v) => Number.parseInt(v, 10))
  .action(async (options: { once?: boolean; port?: number }) => {
    const env = readEnv();
    const { runDemo } = await import('./demo.js');
    const demo = await runDemo({
      redisUrl: rawEnvironment().REDIS_URL === undefined ? undefined : env.REDIS_URL,
      databaseUrl: rawEnvironment().DATABASE_URL === undefined ? undefined : env.DATABASE_URL,
      port: options.port,
      once: options.once,
      logLevel: env.LOG_LEVEL === 'info' ? 'warn' : env.LOG_LEVEL,
      dashboardToken: env.RELAIS_DASHBOARD_TOKEN,
    });
    if (options.once) {
      await demo.stop();
      process.exit(0);
    }
    process.stdout.write('Relais keeps running; Ctrl-C to stop.\n');
    onShutdown(() => demo.stop(), { info: () => undefined });
  });

program
  .command('resolve')
  .description('Show how an address resolves to a neighbourhood, and why')
  .argument('<address>', 'the address as the customer wrote it')
  .option('--country <code>', 'ISO country code (SN, CI, TG, BJ, ML, BF, NE)')
  .option('--alias <text=neighbourhood...>', 'a merchant alias to try, e.g. "Pyrotechnie=Sacré-Cœur"')
  .option(
    '--shop <id>',
    "use this shop's aliases, and list the candidate names with what its delivery service is known to price",
  )
  .action(async (address: string, options: { country?: string; alias?: string[]; shop?: string }) => {
    const aliases = Object.fromEntries((options.alias ?? []).map((a) => a.split('=', 2) as [string, string]));
    let country = options.country;
    let pricing: PricedNames | undefined;
    let candidatesReport: string[] = [];
    const resolver = NeighbourhoodResolver.load();
    if (options.shop) {
      const base = await baseOptions();
      const shop = base.shops.get(options.shop);
      if (!shop) throw new Error(`no shop "${options.shop}" in the shop registry`);
      country ??= shop.country;
      const runtime = createRuntime({ ...base, logger: createLogger({ level: 'silent' }) });
      try {
        const given = { ...aliases }; // the --alias ones win over the shop's
        Object.assign(aliases, await runtime.aliases.forShop(shop), given);
        const first = resolver.resolve({ country, fields: { address1: address }, aliases });
        if (first.ok) {
          const candidates = candidatesOf(resolver, first, aliases);
          const known = await runtime.serviceMap.lookup(
            serviceId(shop),
            candidates.map((c) => c.name),
          );
          pricing = { isPriced: (name) => known.get(name)?.priced };
          candidatesReport = describeCandidates(candidates, known, runtime.now());
        }
      } finally {
        await runtime.close();
      }
    }
    const input = { country, fields: { address1: address }, aliases, ...(pricing ? { pricing } : {}) };
    const resolution = resolver.resolve(input);
    process.stdout.write(`${[explainResolution(input, resolution), ...candidatesReport].join('\n')}\n`);
    process.exitCode = resolution.ok ? 0 : 2;
  });

program
  .command('map')
  .description("The shop's delivery service map: which names it prices (learn: ask it for every gazetteer place)")
  .argument('<action>', 'learn | show')
  .requiredOption('--shop <id>', 'the shop whose service is asked, from its pickup')
  .option('--limit <n>', 'learn: ask at most this many names in this run', (v) => Number.parseInt(v, 10))
  .action(async (action: string, options: { shop: string; limit?: number }) => {
    if (action !== 'learn' && action !== 'show') throw new Error(`unknown action "${action}": learn or show`);
    const base = await baseOptions();
    const shop = base.shops.get(options.shop);
    if (!shop) throw new Error(`no shop "${options.shop}" in the shop registry`);
    const runtime = createRuntime({ ...base, logger: createLogger({ level: 'silent' }) });
    const resolver = NeighbourhoodResolver.load();
    try {
      if (action === 'learn') {
        const report = await learnMap(
          {
            ...mapLearnDeps(runtime, base.prefix, shop, resolver),
            onProgress: (p) => {
              if (p.asked % 50 === 0) process.stderr.write(`asked ${p.asked} of ${p.toAsk}\n`);
            },
          },
          options.limit === undefined ? {} : { limit: options.limit },
        );
        process.stdout.write(
          `${[
            `Fallback tariff (the city name '${report.city}'): ${report.fallbackXof.createQuote} XOF by createQuote${report.fallbackXof.simulatePrice === undefined ? '' : `, ${report.fallbackXof.simulatePrice} XOF by simulatePrice`}`,
            `Asked with ${report.call}: ${report.why}`,
            `Asked ${report.asked} name(s): ${report.priced} priced, ${report.atFallback} at the fallback, ${report.failed} refused; ${report.alreadyKnown} already known`,
          ].join('\n')}\n`,
        );
      }
      const coverage = mapCoverage(
        resolver,
        shop.country,
        await runtime.serviceMap.all(serviceId(shop)),
        runtime.now(),
      );
      process.stdout.write(`${describeCoverage(coverage, shop.dispatch)}\n`);
    } finally {
      await runtime.close();
    }
  });

program
  .command('held')
  .description('List held orders with the reason and what to do')
  .option('--json', 'print JSON')
  .action(async (options: { json?: boolean }) => {
    const base = await baseOptions();
    const runtime = createRuntime({ ...base, logger: createLogger({ level: 'silent' }) });
    try {
      const held = await allHeldOrders(runtime.ledger);
      if (options.json) {
        process.stdout.write(
          `${JSON.stringify(
            held.map((r) => ({
              externalOrderId: r.meta.externalOrderId,
              shop: r.meta.shopId,
              order: r.meta.orderName,
              code: r.hold?.code,
              reason: r.hold?.message,
              since: r.hold?.at,
            })),
            null,
            2,
          )}\n`,
        );
      } else if (held.length === 0) {
        process.stdout.write('No held orders.\n');
      } else {
        for (const r of held) {
          process.stdout.write(
            `${r.meta.externalOrderId}  ${r.meta.orderName}  [${r.hold?.code ?? '?'}] since ${r.hold?.at ?? '?'}\n    ${r.hold?.message ?? ''}\n`,
          );
        }
        process.stdout.write(
          `\n${held.length} held. Fix the cause, then: relais replay <externalOrderId> (or --all)\n`,
        );
      }
    } finally {
      await runtime.close();
    }
  });

program
  .command('replay')
  .description('Replay held orders after fixing their cause (never creates a duplicate shipment)')
  .argument('[externalOrderIds...]', 'orders to replay')
  .option('--all', 'replay every held order')
  .option('--no-wait', 'only queue the replay; do not wait to say whether the order was dispatched or held again')
  .option(
    '--wait-ms <ms>',
    'how long to wait for a running worker to decide each order',
    (v) => Number.parseInt(v, 10),
    30_000,
  )
  .action(async (ids: string[], options: { all?: boolean; wait: boolean; waitMs: number }) => {
    const base = await baseOptions();
    const runtime = createRuntime({ ...base, logger: createLogger({ level: 'silent' }) });
    try {
      await Promise.all(runtime.queues.all().map((q) => q.waitUntilReady()));
      const targets = options.all ? (await allHeldOrders(runtime.ledger)).map((r) => r.meta.externalOrderId) : ids;
      if (targets.length === 0) process.stdout.write('Nothing to replay.\n');
      for (const id of targets) {
        const result = await replayOrder(runtime, id);
        if (!result.ok) {
          process.stdout.write(`not replayed ${id}: ${result.why}\n`);
          process.exitCode = 1;
          continue;
        }
        if (!options.wait) {
          process.stdout.write(`replay queued ${id}\n`);
          continue;
        }
        // Say what happened, not only that a job was queued: a replay whose cause is not fixed is held again.
        const outcome = await replayOutcome(runtime, result, { timeoutMs: options.waitMs });
        if (outcome.kind === 'moved_on') {
          process.stdout.write(
            `replayed ${id}: ${outcome.state === 'waiting' ? "waiting (the shop's policy says not yet)" : `dispatched, now ${outcome.state}`}\n`,
          );
        } else if (outcome.kind === 'held_again') {
          process.stdout.write(`held again ${id} [${outcome.code}]: ${outcome.message}\n`);
          process.exitCode = 1;
        } else {
          process.stdout.write(
            `replay queued ${id}, still ${outcome.state} after ${Math.round(options.waitMs / 1000)} s: is relais worker running? (relais held shows it if it is held again)\n`,
          );
          process.exitCode = 1;
        }
      }
    } finally {
      await runtime.close();
    }
  });

program
  .command('alias')
  .description("Manage a shop's neighbourhood aliases (take effect at once for every worker)")
  .argument('<action>', 'add | remove | list')
  .argument('<shopId>', 'the shop id in the registry')
  .argument('[text]', 'the words customers write, e.g. "Pyrotechnie"')
  .argument('[neighbourhood]', 'the gazetteer neighbourhood they mean, e.g. "Sacré-Cœur"')
  .action(async (action: string, shopId: string, text: string | undefined, neighbourhood: string | undefined) => {
    const base = await baseOptions();
    if (!base.shops.get(shopId)) throw new Error(`no shop "${shopId}" in ${base.env.RELAIS_SHOPS_FILE}`);
    const runtime = createRuntime({ ...base, logger: createLogger({ level: 'silent' }) });
    try {
      if (action === 'add') {
        if (!text || !neighbourhood) throw new Error('usage: relais alias add <shopId> "<text>" "<neighbourhood>"');
        const check = NeighbourhoodResolver.load().resolve({
          country: base.shops.get(shopId)?.country,
          fields: { city: neighbourhood },
        });
        if (!check.ok) throw new Error(`"${neighbourhood}" is not a known neighbourhood: ${check.reason}`);
        await runtime.aliases.add(shopId, text, check.neighbourhood.name);
        process.stdout.write(
          `alias added: "${text}" → ${check.neighbourhood.name}. Replay held orders with: relais replay --all\n`,
        );
      } else if (action === 'remove') {
        if (!text) throw new Error('usage: relais alias remove <shopId> "<text>"');
        process.stdout.write((await runtime.aliases.remove(shopId, text)) ? 'alias removed\n' : 'no such alias\n');
      } else if (action === 'list') {
        const shop = base.shops.get(shopId)!;
        const all = { ...shop.policy.neighbourhoodAliases, ...(await runtime.aliases.list(shopId)) };
        for (const [from, to] of Object.entries(all)) process.stdout.write(`${from} → ${to}\n`);
      } else {
        throw new Error(`unknown action "${action}": add, remove or list`);
      }
    } finally {
      await runtime.close();
    }
  });

// ---- operations: relais doctor (src/ops/doctor.ts) ----
program
  .command('doctor')
  .description(
    'Check the configuration, Redis, dispatch keys, shop credentials and webhooks; say plainly what is wrong',
  )
  .option('--fix', 're-register missing webhooks, re-activate disabled ones, register the Shopify carrier service')
  .option('--json', 'print the report as JSON')
  .action(async (options: { fix?: boolean; json?: boolean }) => {
    const report = await runDoctor({ env: rawEnvironment(), fix: options.fix === true });
    // Exit once the report is written (a pipe may be slow); 1 when anything is wrong, so scripts can gate on it.
    process.stdout.write(options.json ? `${reportJson(report)}\n` : renderReport(report), () =>
      process.exit(report.ok ? 0 : 1),
    );
  });

// ---- operations: relais probe (src/ops/probe.ts) ----
program
  .command('probe')
  .description(
    "Safe first contact with a shop's live dispatch key: quotes and reads only (never creates, readies, cancels or disputes); saves the exchanges and a draft wire profile",
  )
  .requiredOption('--shop <id>', 'the shop in the registry whose dispatch key and profile to check')
  .option('--shipment <id>', 'also read this shipment (shp_...)')
  .option('--external-order <id>', 'also read the shipment of this external order id')
  .option('--tracking-code <code>', 'also read this public tracking code')
  .option(
    '--out <dir>',
    'where to write exchanges.json, learned.json and draft-profile.json (default relais-probe/<shop>-<time>)',
  )
  .action(
    async (options: {
      shop: string;
      shipment?: string;
      externalOrder?: string;
      trackingCode?: string;
      out?: string;
    }) => {
      const env = readEnv();
      process.exitCode = await runProbeCommand(loadShopRegistry(env.RELAIS_SHOPS_FILE), options, {
        stdout: process.stdout,
        stderr: process.stderr,
      });
    },
  );

program.addCommand((await import('./profile-command.js')).profileCommand(baseOptions)); // relais profile learn

// ---- reconciliation and disputes (src/reconcile, src/disputes) ----
program
  .command('reconcile')
  .description(
    'Compare shop orders with shipments by external order id: missed webhooks, unready shipments, drift, COD mismatches, cancellations, disputes; figures per day',
  )
  .option('--shop <id>', 'only this shop (repeat for several)', (value: string, previous: string[] = []) => [
    ...previous,
    value,
  ])
  .option('--since <date>', 'orders created or changed from this day (YYYY-MM-DD) or instant; default 3 days ago')
  .option(
    '--until <date>',
    'orders created before this instant, or up to and including this day (YYYY-MM-DD); default now',
  )
  .option('--json', 'print the report as JSON')
  .option('--csv', 'print findings and figures per day as CSV')
  .option(
    '--repair',
    'repair what Relais can (replay missed orders, mark ready, sync, cancel); a running worker processes the jobs',
  )
  .action(
    async (options: {
      shop?: string[];
      since?: string;
      until?: string;
      json?: boolean;
      csv?: boolean;
      repair?: boolean;
    }) => {
      const base = await baseOptions();
      const runtime = createRuntime({ ...base, logger: createLogger({ level: 'silent' }) });
      try {
        process.exitCode = await runReconcileCommand(runtime, options, {
          stdout: process.stdout,
          stderr: process.stderr,
        });
      } finally {
        await runtime.close();
      }
    },
  );

const dispute = program
  .command('dispute')
  .description("Open and list disputes (claims) on an order's shipment; decided outcomes stay in the order's history");
dispute
  .command('open')
  .argument('<externalOrderId>', 'the order, e.g. dakar-mode:5923711254')
  .requiredOption('--reason <text>', 'what happened: damaged, lost, never delivered...')
  .requiredOption('--description <text>', 'a free description')
  .requiredOption('--claimant-id <id>', "who reports, on the merchant's side")
  .option('--claimant-type <type>', 'role of the reporter', 'seller')
  .option('--json', 'print the claim as JSON')
  .action(
    async (
      externalOrderId: string,
      options: { reason: string; description: string; claimantId: string; claimantType?: string; json?: boolean },
    ) => {
      const base = await baseOptions();
      const runtime = createRuntime({ ...base, logger: createLogger({ level: 'silent' }) });
      try {
        process.exitCode = await runDisputeOpen(runtime, externalOrderId, options, {
          stdout: process.stdout,
          stderr: process.stderr,
        });
      } finally {
        await runtime.close();
      }
    },
  );
dispute
  .command('list')
  .argument('<externalOrderId>', 'the order, e.g. dakar-mode:5923711254')
  .option('--json', 'print the claims as JSON')
  .action(async (externalOrderId: string, options: { json?: boolean }) => {
    const base = await baseOptions();
    const runtime = createRuntime({ ...base, logger: createLogger({ level: 'silent' }) });
    try {
      process.exitCode = await runDisputeList(runtime, externalOrderId, options, {
        stdout: process.stdout,
        stderr: process.stderr,
      });
    } finally {
      await runtime.close();
    }
  });

program
  .command('stale')
  .description(
    'List orders with no final state after RELAIS_STALE_AFTER_DAYS days; --close ends one in Relais only (see src/ops/stale.ts)',
  )
  .option('--days <n>', 'report orders first seen more than this many days ago (default RELAIS_STALE_AFTER_DAYS)')
  .option('--shop <shopId>', "only this shop's orders")
  .option('--json', 'print JSON')
  .option(
    '--close <externalOrderIds...>',
    'close these stale orders: state cancelled in Relais, nothing sent to the service or the shop',
  )
  .option('--reason <text>', 'why they are closed (required with --close; written on the timeline)')
  .option('--by <name>', 'who closes them', userInfo().username)
  .action(
    async (options: {
      days?: string;
      shop?: string;
      json?: boolean;
      close?: string[];
      reason?: string;
      by: string;
    }) => {
      const base = await baseOptions();
      const days = options.days === undefined ? base.env.RELAIS_STALE_AFTER_DAYS : Number(options.days);
      if (!Number.isSafeInteger(days) || days < 0)
        throw new Error(`--days must be a whole number of days, not "${String(options.days)}"`);
      const runtime = createRuntime({ ...base, logger: createLogger({ level: 'silent' }) });
      try {
        process.exitCode = await runStaleCommand(runtime.ledger, { ...options, days, now: runtime.now() }, (text) =>
          process.stdout.write(text),
        );
      } finally {
        await runtime.close();
      }
    },
  );

program.parseAsync(process.argv).catch((error: unknown) => {
  process.stderr.write(`relais: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
