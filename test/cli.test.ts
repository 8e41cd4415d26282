/**
 * The operator's command line, run as a real process against a running Relais: how an address
 * resolves, which orders are held and why, an alias added, and the held order replayed to one shipment.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serviceId } from '../src/orders/dispatch/tariff-guard.js';
import { shopifyOrderPayload } from './support/factories.js';
import { SHOPIFY_SHOP_ID, startTestRelais, type TestRelais } from './support/relais.js';
import { postShopify, shipmentsFor, shopifyExternalId, waitForIdle, waitForState } from './pipeline/helpers.js';

const run = promisify(execFile);
let relais: TestRelais;
let env: NodeJS.ProcessEnv;

async function relaisCli(...args: string[]): Promise<{ stdout: string; code: number }> {
  try {
    const { stdout } = await run(join(process.cwd(), 'node_modules/.bin/tsx'), ['src/main/cli.ts', ...args], {
      env,
      cwd: process.cwd(),
    });
    return { stdout, code: 0 };
  } catch (error) {
    const e = error as { stdout?: string; code?: number };
    return { stdout: e.stdout ?? '', code: e.code ?? 1 };
  }
}

beforeAll(async () => {
  relais = await startTestRelais();
  const registry = join(mkdtempSync(join(tmpdir(), 'relais-cli-')), 'shops.json');
  writeFileSync(registry, JSON.stringify(relais.registryDocument));
  env = {
    PATH: `${join(process.cwd(), 'node_modules/.bin')}:${process.env.PATH ?? ''}`,
    ...relais.env,
    REDIS_URL: relais.redis.url,
    RELAIS_REDIS_PREFIX: relais.prefix,
    RELAIS_SHOPS_FILE: registry,
    LOG_LEVEL: 'silent',
  };
});
afterAll(async () => {
  await relais?.stop();
});

describe('relais resolve', () => {
  it('shows the neighbourhood, the confidence and the words that matched', async () => {
    const { stdout, code } = await relaisCli('resolve', 'Villa 12, Sacre Coeur 3, Dakar', '--country', 'SN');
    expect(code).toBe(0);
    expect(stdout).toMatch(/Neighbourhood: Sacré-Cœur 3/);
    expect(stdout).toMatch(/Confidence: 0\.\d+/);
    expect(stdout).toMatch(/"Sacre Coeur 3"/);
  });

  it("with --shop, lists the candidate names with what the shop's delivery service is known to price", async () => {
    const shop = relais.shops.get(SHOPIFY_SHOP_ID)!;
    const learnedAt = new Date('2026-11-27T10:00:00Z');
    await relais.worker.runtime.serviceMap.record({ id: serviceId(shop), baseUrl: shop.dispatch.baseUrl }, [
      { name: 'Cite Avion', priced: false, totalXof: 4_800, quotedFor: 'Plateau|0-1kg|prepaid', learnedAt },
      { name: 'Ouakam', priced: true, totalXof: 2_300, quotedFor: 'Plateau|0-1kg|prepaid', learnedAt },
    ]);
    const first = await relaisCli('resolve', 'Ouakam, cité Avion', '--shop', SHOPIFY_SHOP_ID);
    // The cité under its commune, without "Cité" and in the plural are spellings too: not known yet, so quoted.
    expect(first.stdout).toMatch(/- Ouakam Cite Avion \[variant\]: price not known \(an order quotes it\)/);
    expect(first.stdout).toMatch(/An order here quotes "Ouakam Cite Avion" first/);
    await relais.worker.runtime.serviceMap.record({ id: serviceId(shop), baseUrl: shop.dispatch.baseUrl }, [
      { name: 'Ouakam Cite Avion', priced: false, totalXof: 4_800, quotedFor: 'Plateau|0-1kg|prepaid', learnedAt },
      { name: 'Avion', priced: false, totalXof: 4_800, quotedFor: 'Plateau|0-1kg|prepaid', learnedAt },
      { name: 'Cite Avions', priced: false, totalXof: 4_800, quotedFor: 'Plateau|0-1kg|prepaid', learnedAt },
    ]);
    const { stdout, code } = await relaisCli('resolve', 'Ouakam, cité Avion', '--shop', SHOPIFY_SHOP_ID);
    expect(code).toBe(0);
    expect(stdout).toMatch(/- Cite Avion \[gazetteer\]: at the fallback tariff, 4800 XOF/);
    expect(stdout).toMatch(/- Ouakam \[area, wider: Ouakam\]: priced, 2300 XOF/);
    expect(stdout).toMatch(/An order here is sent as "Ouakam" \(known priced; one quote\)/);
  });

  it("relais map show --shop prints the service map's coverage of the shop's country", async () => {
    const { stdout, code } = await relaisCli('map', 'show', '--shop', SHOPIFY_SHOP_ID);
    expect(code).toBe(0);
    expect(stdout).toMatch(/Service map of http:\/\/127\.0\.0\.1:\d+: \d+ gazetteer places/);
    expect(stdout).toMatch(/priced: [1-9]\d*, at the fallback tariff: \d+, not known: \d+/);
    expect(stdout).toContain('relais map learn --shop');
  });

  it('relais map learn --names asks the service about the names of its own list first, so the map knows its spellings', async () => {
    const list = join(mkdtempSync(join(tmpdir(), 'relais-names-')), 'service-places.txt');
    writeFileSync(list, '# the service published these\nParcelles U17\n\nSicap Karack\n');
    const { stdout, code } = await relaisCli(
      'map',
      'learn',
      '--shop',
      SHOPIFY_SHOP_ID,
      '--names',
      list,
      '--limit',
      '2',
    );
    expect(code).toBe(0);
    expect(stdout).toMatch(/Asked 2 name\(s\)/);
    const shop = relais.shops.get(SHOPIFY_SHOP_ID)!;
    const known = await relais.worker.runtime.serviceMap.lookup(serviceId(shop), ['Parcelles U17', 'Sicap Karack']);
    expect([...known.keys()].sort()).toEqual(['Parcelles U17', 'Sicap Karack']);
  });

  it('says why a city name alone is not enough, and exits non-zero', async () => {
    const { stdout, code } = await relaisCli('resolve', 'Rue 10, Dakar', '--country', 'SN');
    expect(code).toBe(2);
    expect(stdout).toMatch(/'Dakar' is a city, not a neighbourhood/);
    expect(stdout).toMatch(/alias/);
  });
});

/** Posts an order whose address names no neighbourhood, and waits until it is held. */
async function heldOrderAt(street: string): Promise<string> {
  const payload = shopifyOrderPayload({
    shipping_address: { address1: street, address2: '', city: 'Dakar', latitude: null, longitude: null },
  });
  await postShopify(relais, 'orders/create', payload);
  const extId = shopifyExternalId(payload.id);
  await waitForState(relais, extId, ['held'], 30_000);
  return extId;
}

describe('relais held, alias and replay', () => {
  it('lists a held order with its reason, and replays it after an alias is added: one shipment', async () => {
    const extId = await heldOrderAt('Derrière la pharmacie Guigon');

    const held = await relaisCli('held', '--json');
    expect(held.code).toBe(0); // it once printed its answer, then crashed closing a queue still connecting
    const rows = JSON.parse(held.stdout) as { externalOrderId: string; code: string; reason: string }[];
    const row = rows.find((r) => r.externalOrderId === extId);
    expect(row?.code).toBe('neighbourhood_not_found');
    expect(row?.reason).toMatch(/Guigon/);

    const alias = await relaisCli('alias', 'add', 'dakar-mode', 'pharmacie Guigon', 'Médina');
    expect(alias.code).toBe(0);
    expect(alias.stdout).toMatch(/alias added/);

    const replay = await relaisCli('replay', '--all');
    expect(replay.stdout).toContain(`replayed ${extId}: dispatched, now ready`);
    const record = await waitForState(relais, extId, ['ready'], 30_000);
    expect(record.neighbourhood?.name).toMatch(/M[ée]dina/);
    await waitForIdle(relais, 30_000);
    expect(shipmentsFor(relais, extId)).toHaveLength(1);

    const after = await relaisCli('replay', extId);
    expect(after.code).toBe(1);
    expect(after.stdout).toMatch(/not held/);
  }, 120_000);
});

describe('relais replay says what happened', () => {
  it('says "held again" with the code and the reason, and exits 1, when the cause was not fixed', async () => {
    const extId = await heldOrderAt('Derrière le marché Tilène Nord');
    const replay = await relaisCli('replay', extId);
    expect(replay.code).toBe(1);
    expect(replay.stdout).toMatch(new RegExp(`^held again ${extId} \\[neighbourhood_not_found\\]: .*Tilène`, 'm'));
    expect(replay.stdout).not.toMatch(/^replayed /m);
  }, 60_000);
});

describe('relais --version', () => {
  it('prints the version of package.json and of Node, and exits 0', async () => {
    const { stdout, code } = await relaisCli('--version');
    expect(code).toBe(0);
    expect(stdout.trim()).toBe(
      `relais ${(JSON.parse(readFileSync('package.json', 'utf8')) as { version: string }).version} (Node ${process.versions.node})`,
    );
  });
});
