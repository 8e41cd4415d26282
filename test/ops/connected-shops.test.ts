/**
 * Shops kept in the database (issue 17's foundation): `relais shops import` moves a registry file's shops there
 * with their secrets sealed, `relais shops list` shows them, and a web process and worker serving the database's
 * shops alone (no registry file) ship an order. A real PostgreSQL, real processes for the CLI, real HTTP.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SecretBox } from '../../src/shops/secret-box.js';
import { loadServedShops, prepareImport } from '../../src/shops/shop-directory.js';
import { buildShopRegistry, defaultSecretSourceFor, ShopRegistryError } from '../../src/shops/shops.js';
import { PostgresShopSecretStore } from '../../src/adapters/postgres/pg-shop-secrets.js';
import { PostgresShopDirectory } from '../../src/adapters/postgres/pg-shops.js';
import { NeighbourhoodResolver } from '../../src/geo/resolver.js';
import { startWeb, type RunningWeb } from '../../src/main/web.js';
import { startWorker, type RunningWorker } from '../../src/main/worker.js';
import { shopifyOrderPayload, shopifyWebhookHeaders } from '../support/factories.js';
import { startTestDatabase, type TestDatabase } from '../support/postgres.js';
import { SHOPIFY_DOMAIN, SHOPIFY_SHOP_ID, startTestRelais, waitFor, type TestRelais } from '../support/relais.js';

const run = promisify(execFile);
const KEYS = `k1:${randomBytes(32).toString('base64')}`;

let relais: TestRelais;
let db: TestDatabase;
beforeAll(async () => {
  relais = await startTestRelais({ inProcessWorker: false });
  db = await startTestDatabase();
});
afterAll(async () => {
  await relais?.stop();
  await db?.stop();
});

async function cli(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const out = await run(join(process.cwd(), 'node_modules/.bin/tsx'), ['src/main/cli.ts', ...args], {
      env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'silent', ...env },
      cwd: process.cwd(),
    });
    return { code: 0, ...out };
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string };
    return { code: e.code ?? 1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

describe('connected shops in the database', () => {
  it("relais shops import seals the file's secrets (none readable in the tables), tells the running processes, and relais shops list shows the shops", async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'relais-import-')), 'shops.json');
    writeFileSync(file, JSON.stringify(relais.registryDocument));
    const env = {
      ...relais.env,
      DATABASE_URL: db.url,
      RELAIS_DB_SCHEMA: db.schema,
      RELAIS_SECRET_KEYS: KEYS,
      // The import announces the change on the test's own Redis, never on one the machine happens to run.
      REDIS_URL: relais.redis.url,
    };
    const imported = await cli(['shops', 'import', file], env);
    expect(imported.stderr).toBe('');
    expect(imported.stdout).toContain(`imported ${SHOPIFY_SHOP_ID} (shopify), 4 secret(s) sealed`);
    expect(imported.stdout).toContain('Running web processes and workers were told');
    expect((await cli(['shops', 'list'], env)).stdout).toMatch(new RegExp(`${SHOPIFY_SHOP_ID}  shopify  enabled`));

    const tables = await db
      .pool()
      .query<{ text: string }>(
        "SELECT (SELECT string_agg(document::text, ' ') FROM shops) || encode((SELECT string_agg(sealed, '') FROM shop_secrets), 'escape') AS text",
      );
    for (const secret of Object.values(relais.secrets)) expect(tables.rows[0]!.text).not.toContain(secret);
    expect(tables.rows[0]!.text).toContain('{"stored": "shopify.accessToken"}');
  });

  it("a web process and a worker serving the database's shops, with no registry file, ship an order of a connected shop", async () => {
    const pool = db.pool();
    const directory = new PostgresShopDirectory(pool);
    const secrets = new PostgresShopSecretStore(pool, SecretBox.fromSetting(KEYS));
    for (const shop of prepareImport(
      relais.registryDocument as { shops: unknown[] },
      defaultSecretSourceFor(relais.env),
    )) {
      for (const [name, value] of shop.secrets) await secrets.put(shop.id, name, value);
      await directory.save(shop);
    }
    const shops = await loadServedShops({ directory, secrets });
    expect(
      shops
        .all()
        .map((s) => s.id)
        .sort(),
    ).toEqual(
      relais.shops
        .all()
        .map((s) => s.id)
        .sort(),
    );
    expect(shops.get(SHOPIFY_SHOP_ID)?.dispatch.apiKey.reveal()).toBe(relais.secrets.dispatchApiKey);

    const base = { ...relais.base, shops };
    let web: RunningWeb | undefined;
    let worker: RunningWorker | undefined;
    try {
      web = await startWeb({ ...base, port: 0 });
      worker = await startWorker({ ...base, resolver: NeighbourhoodResolver.load(), concurrency: 2 });
      const payload = shopifyOrderPayload({ shipping_address: { address1: 'Villa 12, Sacré Coeur 3', city: 'Dakar' } });
      const body = JSON.stringify(payload);
      const answer = await fetch(`${web.url}/webhooks/shopify`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...shopifyWebhookHeaders({
            topic: 'orders/create',
            shopDomain: SHOPIFY_DOMAIN,
            body,
            secret: relais.secrets.shopifyClientSecret,
          }),
        },
        body,
      });
      expect(answer.status).toBe(200);
      const extId = `${SHOPIFY_SHOP_ID}:${String(payload.id)}`;
      const record = await waitFor(
        async () => {
          const r = await worker!.runtime.ledger.get(extId);
          return r && ['ready', 'held'].includes(r.state) ? r : undefined;
        },
        { timeoutMs: 20_000, what: "the connected shop's order to be dispatched" },
      );
      expect(record.state).toBe('ready');
      expect(relais.emulator.calls().filter((c) => c.operation === 'createShipment')).toHaveLength(1);
    } finally {
      await worker?.close();
      await web?.close();
    }
  });

  it('refuses a shop defined both in the registry file and in the database, naming it', async () => {
    const directory = new PostgresShopDirectory(db.pool());
    const secrets = new PostgresShopSecretStore(db.pool(), SecretBox.fromSetting(KEYS));
    const fileDocument = relais.registryDocument as { shops: unknown[] };
    const refused = await loadServedShops({
      fileDocument,
      fileSecrets: defaultSecretSourceFor(relais.env),
      directory,
      secrets,
    }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ShopRegistryError);
    expect((refused as ShopRegistryError).problems).toContain(
      `shop ${SHOPIFY_SHOP_ID} is both in the registry file and connected in the database: remove it from one`,
    );
    // And the file alone still loads as before.
    expect(buildShopRegistry(fileDocument, defaultSecretSourceFor(relais.env)).all()).toHaveLength(2);
  });
});
