/**
 * The pieces relais demo (demo.ts) is built from: the emulators' delivery settings and webhooks, the sample
 * orders' addresses, the outcome table, and a private database and Redis when none is given.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import type { OrderRecord } from '../ledger/order-ledger.js';
import { createPool, databaseUrlForHumans, migrate } from '../adapters/postgres/database.js';
import { postgresAnswers, startPrivatePostgres, type PrivatePostgres } from './private-postgres.js';
import type { DispatchEmulator } from '@relais/emulators/dispatch';
import type { Runtime } from './runtime.js';
import type { RunningWeb } from './web.js';

export function deliverySettings(dispatch: DispatchEmulator, apiKey: string) {
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
export async function wireDeliveryWebhooks(
  web: RunningWeb,
  dispatch: DispatchEmulator,
  shops: string[],
): Promise<void> {
  for (const shop of shops) {
    const token = await web.runtime.shopSecrets!.get(shop, 'dispatch.webhookToken');
    if (!token) throw new Error(`demo: ${shop} has no delivery-webhook token after its settings were saved`);
    dispatch.setOrganisationWebhook(`org_${shop}`, `${web.url}/webhooks/dispatch/${shop}/${token.value.reveal()}`);
  }
}

/** Switching on announces the change; web and worker reload it within moments. The orders wait for that. */
export async function servedByBoth(runtimes: Runtime[], shops: string[]): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (!runtimes.every((r) => shops.every((id) => r.options.shops.get(id)))) {
    if (Date.now() > deadline) throw new Error(`demo: web and worker did not start serving ${shops.join(', ')}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The generated dashboard token goes to a file only its owner can read, not to the terminal or a log. */
export function writeTokenFile(token: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'relais-demo-'));
  const file = join(dir, 'dashboard-token');
  writeFileSync(file, `${token}\n`, { mode: 0o600 });
  return file;
}

export function address(name: string, address1: string, city: string) {
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

export function describe(r: OrderRecord): string {
  if (r.state === 'held') return `held: ${r.hold?.message ?? ''}`;
  const where = r.delivery ? ` (${r.delivery.serviceStatus})` : r.shipment ? ` (${r.shipment.status})` : '';
  return `${r.state}${where}`;
}

export function detail(r: OrderRecord): string {
  if (r.state === 'held') return r.hold?.message ?? '';
  const collect = r.shipment?.orderAmountXof ? `collect ${r.shipment.orderAmountXof} XOF` : 'prepaid';
  return [r.neighbourhood ? `→ ${r.neighbourhood.name}` : '', collect].filter(Boolean).join(', ');
}

export function writtenInShop(r: OrderRecord): string {
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

export function table(rows: DemoOutcome[]): string {
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
export async function demoDatabase(
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

export async function demoRedis(
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

export async function answers(url: string): Promise<boolean> {
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

export function freePort(): Promise<number> {
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
