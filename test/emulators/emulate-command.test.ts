/**
 * `relais emulate woocommerce` seeds products from the command line (--product, repeatable) and from each
 * shop of its --config file, so Relais can read real weights from an emulated shop. Read back through the
 * wc/v3 REST API over real HTTP (Basic auth).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { silentLogger } from '../../src/log.js';
import { emulateWooCommerce, parseProductSpec, type RunningEmulator } from '../../src/main/emulate.js';

let running: RunningEmulator | undefined;
afterEach(async () => {
  await running?.close();
  running = undefined;
  vi.unstubAllEnvs();
});

async function start(options: { products?: string[]; config?: string }): Promise<string[]> {
  const lines: string[] = [];
  running = await emulateWooCommerce({ host: '127.0.0.1', port: 0, ...options }, silentLogger, (line) =>
    lines.push(line),
  );
  return lines;
}

function productIds(lines: string[]): Map<string, number> {
  return new Map(
    lines.flatMap((l) => {
      const m = /^ {2}product (\d+): ([^,]+)/.exec(l);
      return m ? [[m[2]!, Number(m[1])] as const] : [];
    }),
  );
}

describe('relais emulate woocommerce: products', () => {
  it('creates each --product in the shop, with its price, weight and sku, readable through the REST API', async () => {
    const lines = await start({ products: ['Boubou wax:12500:0.8:BW-01', 'Sac en raphia:7000'] });
    const site = /^ {2}shop demo-shop: (\S+)$/m.exec(lines.join('\n'))![1]!;
    const [, consumerKey, consumerSecret] = /consumer key for this run: (\S+); consumer secret: (\S+)/.exec(
      lines.join('\n'),
    )!;
    const product = async (id: number | undefined) => {
      const response = await fetch(`${site}/wp-json/wc/v3/products/${String(id)}`, {
        headers: { authorization: `Basic ${Buffer.from(`${consumerKey!}:${consumerSecret!}`).toString('base64')}` },
      });
      expect(response.status).toBe(200);
      return (await response.json()) as Record<string, unknown>;
    };
    const ids = productIds(lines);
    const boubou = await product(ids.get('Boubou wax'));
    expect(boubou).toMatchObject({ name: 'Boubou wax', regular_price: '12500', weight: '0.8', sku: 'BW-01' });
    const sac = await product(ids.get('Sac en raphia'));
    expect(sac).toMatchObject({ name: 'Sac en raphia', regular_price: '7000', weight: '' });
  });

  it('creates the products a --config shop lists, in that shop', async () => {
    vi.stubEnv('T_WOO_KEY', 'ck_emulate_test_key');
    vi.stubEnv('T_WOO_SECRET', 'cs_emulate_test_secret');
    const config = join(mkdtempSync(join(tmpdir(), 'relais-emulate-')), 'woo.json');
    writeFileSync(
      config,
      JSON.stringify({
        shops: [
          {
            id: 'abidjan-tech',
            consumerKeyEnv: 'T_WOO_KEY',
            consumerSecretEnv: 'T_WOO_SECRET',
            weightUnit: 'g',
            products: [{ name: 'Casque audio', price: '25000', weight: '350' }],
          },
        ],
      }),
    );
    const lines = await start({ config });
    expect(lines).toContain(
      '  product ' + String(productIds(lines).get('Casque audio')) + ': Casque audio, price 25000, weight 350',
    );
    expect(lines.join('\n')).not.toContain('ck_emulate_test_key');
  });

  it('refuses a --product that is not name:price[:weight[:sku]], saying the expected form', () => {
    expect(() => parseProductSpec('')).toThrow(
      /expected name:price\[:weight\[:sku\]\], e\.g\. "Boubou wax:12500:0\.8"/,
    );
    expect(() => parseProductSpec('Boubou:douze mille')).toThrow(/the price "douze mille" is not a number/);
  });
});
