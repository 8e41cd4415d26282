/**
 * Checkout prices against the ceiling of the same stack, as ratios measured in one run.
 *
 *   npx tsx bench/checkout-rates.bench.ts [--rounds 5] [--concurrency 16] [--hits 2000] [--misses 600]
 *
 * Everything on 127.0.0.1: a private redis-server, the dispatch emulator, the real Relais web process (createApp,
 * so the checkout routes are mounted as in production) and two bare Express baselines, all in this process; the
 * load comes from a child process (plain Node, keep-alive HTTP, fixed request counts at fixed concurrency).
 *
 *   baseline        bare Express + express.raw + HMAC check + Redis GET, answering a fixed JSON
 *   relais hit      POST /checkout/shopify/:shop/rates, price in the Redis cache
 *   baseline miss   the baseline + one simulatePrice through the same dispatch client + Redis SET
 *   relais miss     the same endpoint, cache emptied before the round, every request a new (neighbourhood, band)
 *
 * Scenarios alternate within each round (order reversed every other round) after one warm-up round that is not
 * counted. Printed: per scenario, medians and spread (min–max) of throughput and p99; per round, the ratios
 * relais/baseline, then their medians and spread. Absolute numbers on shared machines move; the ratios are the result.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { performance } from 'node:perf_hooks';
import express from 'express';
import { Redis } from 'ioredis';
import { checkBodySignature, signBody } from '../src/shops/platforms/checkout-signature.js';
import { buildShopRegistry } from '../src/shops/shops.js';
import { DispatchClient } from '../src/adapters/dispatch-api/client.js';
import { startDispatchEmulator } from '@relais/emulators/dispatch';
import { csvRecords } from '../src/geo/csv.js';
import { NeighbourhoodResolver } from '../src/geo/resolver.js';
import { silentLogger } from '../src/log.js';
import { startWeb } from '../src/main/web.js';
import { startTestDatabase, stopOwnServer } from '../test/support/postgres.js';
import { startRedis } from '../test/support/redis.js';
import { makeSecrets, registryDocument, secretEnv, SHOPIFY_DOMAIN, SHOPIFY_SHOP_ID } from '../test/support/relais.js';

const args = new Map<string, string>();
for (let i = 2; i < process.argv.length; i += 2)
  args.set(process.argv[i]!.replace(/^--/, ''), process.argv[i + 1] ?? '');
const ROUNDS = Number(args.get('rounds') ?? 5);
const CONCURRENCY = Number(args.get('concurrency') ?? 16);
const HITS = Number(args.get('hits') ?? 2000);
const MISSES = Number(args.get('misses') ?? 600);

interface Signed {
  body: string;
  signature: string;
}
interface RunResult {
  /** CPU time of this process (the servers) per request, in µs: steadier than wall time on a shared machine. */
  cpuUs: number;
  requests: number;
  seconds: number;
  rps: number;
  p50: number;
  p99: number;
  statuses: Record<string, number>;
}

/** The load generator: plain Node, run as a child so it does not share the servers' event loop. */
const LOADER = `
import http from 'node:http';
const chunks = [];
for await (const c of process.stdin) chunks.push(c);
const { url, headerName, requests, concurrency, extraHeaders } = JSON.parse(Buffer.concat(chunks).toString());
const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
const target = new URL(url);
const latencies = [];
const statuses = {};
let next = 0;
function one(r) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const req = http.request({ host: target.hostname, port: target.port, path: target.pathname, method: 'POST', agent,
      headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(r.body), [headerName]: r.signature, ...extraHeaders } }, (res) => {
      res.resume();
      res.on('end', () => { latencies.push(performance.now() - started); statuses[res.statusCode] = (statuses[res.statusCode] ?? 0) + 1; resolve(); });
    });
    req.on('error', reject);
    req.end(r.body);
  });
}
process.stdout.write('R\\n');
const began = performance.now();
await Promise.all(Array.from({ length: concurrency }, async () => { while (next < requests.length) await one(requests[next++]); }));
const seconds = (performance.now() - began) / 1000;
latencies.sort((a, b) => a - b);
const at = (q) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))];
agent.destroy();
process.stdout.write(JSON.stringify({ requests: requests.length, seconds, rps: requests.length / seconds, p50: at(0.5), p99: at(0.99), statuses }));
`;

function load(url: string, requests: Signed[], extraHeaders: Record<string, string> = {}): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', LOADER], {
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    let out = '';
    let cpuAtStart: NodeJS.CpuUsage | undefined;
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      // The child says R once it has read its requests: CPU counts from there (not the cost of sending them).
      if (cpuAtStart === undefined && out.startsWith('R\n')) cpuAtStart = process.cpuUsage();
    });
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0 || cpuAtStart === undefined) return reject(new Error(`load generator exited ${String(code)}`));
      const cpu = process.cpuUsage(cpuAtStart);
      const result = JSON.parse(out.slice(2)) as Omit<RunResult, 'cpuUs'>;
      resolve({ ...result, cpuUs: (cpu.user + cpu.system) / result.requests });
    });
    child.stdin.end(
      JSON.stringify({ url, headerName: 'x-shopify-hmac-sha256', requests, concurrency: CONCURRENCY, extraHeaders }),
    );
  });
}

function listen(app: express.Express): Promise<{ server: Server; url: string }> {
  return new Promise((resolve, reject) => {
    const server = app.listen(0, '127.0.0.1', () => {
      const address = server.address();
      resolve({ server, url: `http://127.0.0.1:${String(typeof address === 'object' && address ? address.port : 0)}` });
    });
    server.once('error', reject);
  });
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};
const spread = (xs: number[], digits: number) =>
  `${Math.min(...xs).toFixed(digits)}–${Math.max(...xs).toFixed(digits)}`;

async function main(): Promise<void> {
  const redis = await startRedis();
  const db = await startTestDatabase();
  const secrets = makeSecrets();
  const emulator = await startDispatchEmulator({
    organisations: [{ id: 'org_bench', name: 'bench', apiKeys: [secrets.dispatchApiKey] }],
  });
  const env = secretEnv(secrets);
  const shops = buildShopRegistry(
    registryDocument({ dispatchBaseUrl: emulator.baseUrl, trackingUrl: emulator.trackingUrl }),
    (ref) => ('env' in ref ? env[ref.env] : undefined),
  );
  const prefix = `{${redis.prefix}}`;
  const web = await startWeb({
    redisUrl: redis.url,
    prefix,
    shops,
    logger: silentLogger,
    port: 0,
    databaseUrl: db.url,
    databaseSchema: db.schema,
  });
  const secret = secrets.shopifyClientSecret;

  // The ceiling: what any signed, cached JSON endpoint on this stack costs.
  // The web process's producer settings (fail fast), once connected.
  const baselineRedis = new Redis(redis.url, { enableOfflineQueue: false, maxRetriesPerRequest: 1 });
  await new Promise((resolve) => baselineRedis.once('ready', resolve));
  await baselineRedis.set('bench:fixed', '230000');
  const fixed = {
    rates: [
      {
        service_name: 'Relais — livraison',
        service_code: 'RELAIS_STANDARD',
        total_price: '230000',
        description: 'Livraison à Almadies',
        currency: 'XOF',
      },
    ],
  };
  const client = new DispatchClient({
    baseUrl: emulator.baseUrl,
    trackingUrl: emulator.trackingUrl,
    apiKey: secrets.dispatchApiKey,
    logger: silentLogger,
  });
  const baselineApp = express();
  baselineApp.post('/baseline', express.raw({ type: () => true, limit: 1024 * 1024 }), async (req, res) => {
    const raw = req.body as Buffer;
    if (!checkBodySignature(raw, req.headers['x-shopify-hmac-sha256'] as string | undefined, secret).ok)
      return void res.status(401).json({ error: 'invalid_signature' });
    await baselineRedis.get('bench:fixed');
    res.json(fixed);
  });
  let missCounter = 0;
  baselineApp.post('/baseline-miss', express.raw({ type: () => true, limit: 1024 * 1024 }), async (req, res) => {
    const raw = req.body as Buffer;
    if (!checkBodySignature(raw, req.headers['x-shopify-hmac-sha256'] as string | undefined, secret).ok)
      return void res.status(401).json({ error: 'invalid_signature' });
    const key = `bench:miss:${String(missCounter++)}`;
    await baselineRedis.get(key);
    const price = await client.simulatePrice({ pickup_city: 'Plateau', dropoff_city: 'Almadies', weight_kg: 2 });
    await baselineRedis.set(key, String(price.total), 'EX', 900);
    res.json(fixed);
  });
  const baseline = await listen(baselineApp);

  // Rate requests: Shopify's published example moved to Dakar neighbourhoods the resolver knows.
  const published = JSON.parse(
    readFileSync(new URL('../test/fixtures/shopify/carrier-service-request.json', import.meta.url), 'utf8'),
  ) as {
    rate: { destination: Record<string, unknown>; items: Record<string, unknown>[]; currency: string };
  };
  const resolver = NeighbourhoodResolver.load();
  const names = csvRecords(
    readFileSync(new URL('../data/neighbourhoods/SN_dakar.csv', import.meta.url), 'utf8'),
    'SN_dakar.csv',
  )
    .map((r) => r.neighbourhood ?? '')
    .filter((n) => {
      const r = resolver.resolve({ country: 'SN', fields: { address1: n, city: 'Dakar' } });
      return r.ok && r.neighbourhood.name === n;
    })
    .slice(0, 60);
  const GRAMS = [300, 800, 1500, 2500, 4000, 6000, 9000, 12_000, 18_000, 25_000, 35_000, 45_000];
  const sign = (destination: string, grams: number): Signed => {
    const body = structuredClone(published);
    body.rate.currency = 'XOF';
    body.rate.destination = {
      ...body.rate.destination,
      country: 'SN',
      postal_code: null,
      province: 'Dakar',
      city: 'Dakar',
      address1: `Villa 5, ${destination}`,
    };
    body.rate.items = [{ ...body.rate.items[0], grams, quantity: 1 }];
    const text = JSON.stringify(body);
    return { body: text, signature: signBody(text, secret) };
  };
  const hitSet = names.slice(0, 20).map((n) => sign(n, 1500));
  const hits = Array.from({ length: HITS }, (_, i) => hitSet[i % hitSet.length]!);
  const missSet = names.flatMap((n) => GRAMS.map((g) => sign(n, g)));
  const misses = missSet.slice(0, Math.min(MISSES, missSet.length));
  const relaisUrl = `${web.url}/checkout/shopify/${SHOPIFY_SHOP_ID}/rates`;
  const domain = { 'x-shopify-shop-domain': SHOPIFY_DOMAIN };
  const flush = () => redis.client().flushdb();

  const scenarios: Record<string, () => Promise<RunResult>> = {
    baseline: () => load(`${baseline.url}/baseline`, hits),
    'relais hit': async () => {
      await load(relaisUrl, hitSet, domain); // make sure every hit body is cached
      return load(relaisUrl, hits, domain);
    },
    'baseline miss': () => load(`${baseline.url}/baseline-miss`, misses),
    'relais miss': async () => {
      await flush();
      return load(relaisUrl, misses, domain);
    },
  };

  const results: Record<string, RunResult[]> = Object.fromEntries(Object.keys(scenarios).map((k) => [k, []]));
  const order = Object.keys(scenarios);
  const started = performance.now();
  for (let round = 0; round <= ROUNDS; round++) {
    const sequence = round % 2 === 0 ? order : [...order].reverse();
    for (const name of sequence) {
      const result = await scenarios[name]!();
      if (round > 0) results[name]!.push(result);
      const unexpected = Object.keys(result.statuses).filter((s) => s !== '200');
      if (unexpected.length > 0) throw new Error(`${name}: unexpected statuses ${JSON.stringify(result.statuses)}`);
    }
  }

  const redisVersion = /redis_version:(\S+)/.exec(await baselineRedis.info('server'))?.[1] ?? '?';
  console.log(
    `checkout-rates bench: Node ${process.version}, Redis ${redisVersion}, ${String(ROUNDS)} rounds (+1 warm-up), concurrency ${String(CONCURRENCY)}, ${String(HITS)} hit / ${String(misses.length)} miss requests per run, ${((performance.now() - started) / 1000).toFixed(1)} s`,
  );
  console.log(
    '\nscenario        req/s median (spread)     p99 ms median (spread)    server CPU µs/request median (spread)',
  );
  for (const [name, runs] of Object.entries(results)) {
    const rps = runs.map((r) => r.rps);
    const p99 = runs.map((r) => r.p99);
    const cpu = runs.map((r) => r.cpuUs);
    console.log(
      `${name.padEnd(15)} ${median(rps).toFixed(0).padStart(6)} (${spread(rps, 0)})`.padEnd(42) +
        `${median(p99).toFixed(1).padStart(6)} (${spread(p99, 1)})`.padEnd(26) +
        `${median(cpu).toFixed(0).padStart(6)} (${spread(cpu, 0)})`,
    );
  }
  const ratio = (a: string, b: string, field: 'rps' | 'p99' | 'cpuUs') =>
    results[a]!.map((r, i) => r[field] / results[b]![i]![field]);
  console.log('\nratio (per round, then median and spread)');
  for (const [a, b] of [
    ['relais hit', 'baseline'],
    ['relais miss', 'baseline'],
    ['relais miss', 'baseline miss'],
  ] as const) {
    const t = ratio(a, b, 'rps');
    const p = ratio(a, b, 'p99');
    const c = ratio(a, b, 'cpuUs');
    console.log(
      `${`${a} / ${b}`.padEnd(30)} throughput ${median(t).toFixed(2)} (${spread(t, 2)})   p99 ${median(p).toFixed(2)} (${spread(p, 2)})   CPU/request ${median(c).toFixed(2)} (${spread(c, 2)})`,
    );
  }

  await new Promise<void>((resolve) => baseline.server.close(() => resolve()));
  await client.close();
  baselineRedis.disconnect();
  await web.close();
  await emulator.close();
  await redis.stop();
  await db.stop();
  await stopOwnServer();
}

await main();
