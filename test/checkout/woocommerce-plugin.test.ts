/**
 * The WooCommerce shipping-method plugin (plugins/woocommerce-relais-rates/relais-rates.php). Where PHP is installed
 * (Debian's php-cli, as in CI) it is linted with `php -l` and run: test/checkout/support/wc-harness.php defines the
 * few WordPress/WooCommerce functions it calls and makes wp_remote_post a real HTTP request to the Relais under test.
 * Without PHP, what can be checked without running it is: the plugin header and the pieces WooCommerce requires.
 */
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../support/redis.js';
import { startCheckoutStack, WOO_OWN_SECRET_SHOP_ID, WOO_SHOP_ID, type CheckoutStack } from './stack.js';

const PLUGIN = fileURLToPath(new URL('../../plugins/woocommerce-relais-rates/relais-rates.php', import.meta.url));
const HARNESS = fileURLToPath(new URL('./support/wc-harness.php', import.meta.url));
const HAS_PHP = spawnSync('php', ['-v'], { stdio: 'ignore' }).status === 0;

interface HarnessOutput {
  class: string;
  supports: string[];
  rates: { id: string; label: string; cost: number; meta_data: Record<string, string> }[];
  requests: { url: string; headers: Record<string, string>; body: string; timeout: number }[];
  logs: { level: string; message: string; source: string }[];
  features: { feature: string; plugin_file: string; compatible: boolean }[];
  textdomains: Record<string, string>;
  texts: Record<string, string>;
}

const PO = fileURLToPath(
  new URL('../../plugins/woocommerce-relais-rates/languages/relais-rates-fr_FR.po', import.meta.url),
);

/** The msgid → msgstr pairs of a .po file (single-line entries, as this plugin's file is written). */
function poEntries(path: string): Map<string, string> {
  const unquote = (q: string) => JSON.parse(q) as string;
  const entries = new Map<string, string>();
  for (const m of readFileSync(path, 'utf8').matchAll(/^msgid ("(?:[^"\\]|\\.)*")\nmsgstr ("(?:[^"\\]|\\.)*")$/gm))
    entries.set(unquote(m[1]!), unquote(m[2]!));
  return entries;
}

describe('the WooCommerce plugin file', () => {
  it('declares a WordPress plugin that registers a WooCommerce shipping method posting signed rate requests', () => {
    const source = readFileSync(PLUGIN, 'utf8');
    expect(source.startsWith('<?php')).toBe(true);
    expect(source).toMatch(/^ \* Plugin Name: +Relais/m);
    expect(source).toMatch(/class Relais_Rates_Shipping_Method extends WC_Shipping_Method/);
    expect(source).toMatch(/add_filter\( 'woocommerce_shipping_methods'/);
    expect(source).toMatch(/wp_remote_post\(/);
    expect(source).toMatch(
      /'X-Relais-Signature' => base64_encode\( hash_hmac\( 'sha256', \$body, \$secret, true \) \)/,
    );
  });

  it("has a French translation for every translatable text, the plugin header's name and description included", () => {
    const source = readFileSync(PLUGIN, 'utf8');
    const texts = [...source.matchAll(/__\( '((?:[^'\\]|\\.)*)', 'relais-rates' \)/g)].map((m) =>
      m[1]!.replace(/\\'/g, "'"),
    );
    const header = ['Plugin Name', 'Description'].map((field) =>
      new RegExp(`^ \\* ${field}: +(.+)$`, 'm').exec(source)![1]!.trim(),
    );
    expect(texts.length).toBeGreaterThanOrEqual(10);
    const french = poEntries(PO);
    for (const text of [...texts, ...header]) expect(french.get(text), text).toMatch(/\S/);
    expect(source).toMatch(/^ \* Domain Path: +\/languages$/m);
  });
});

if (HAS_PHP) {
  describe('the WooCommerce plugin, run by PHP', () => {
    let stack: CheckoutStack;
    beforeAll(async () => {
      stack = await startCheckoutStack();
    });
    afterAll(async () => {
      await stack?.stop();
    });
    afterEach(() => {
      stack.emulator.faults.clear();
    });

    const run = (
      overrides: {
        settings?: Record<string, string>;
        currency?: string;
        destination?: Record<string, string>;
        paymentMethod?: string;
        locale?: string;
      } = {},
    ): Promise<HarnessOutput> => {
      const input = {
        plugin: PLUGIN,
        ...(overrides.paymentMethod === undefined ? {} : { chosen_payment_method: overrides.paymentMethod }),
        ...(overrides.locale ? { locale: overrides.locale } : {}),
        instance_id: 3,
        currency: overrides.currency ?? 'XOF',
        weight_unit: 'g',
        settings: {
          relais_url: `${stack.web.url}/`,
          shop_id: WOO_SHOP_ID,
          secret: stack.secrets.wooWebhookSecret,
          timeout: '3',
          ...overrides.settings,
        },
        package: {
          destination: {
            country: 'CI',
            state: 'AB',
            postcode: '',
            city: 'Abidjan',
            address: 'Rue des Jardins',
            address_1: 'Rue des Jardins',
            address_2: 'Cocody Danga',
            ...overrides.destination,
          },
          contents: [
            { weight: '400', quantity: 2, needs_shipping: true },
            { weight: '', quantity: 1, needs_shipping: false },
          ],
        },
      };
      // Asynchronous (never spawnSync): the Relais under test answers from this same process.
      return new Promise<HarnessOutput>((resolve, reject) => {
        const child = spawn('php', [HARNESS], { stdio: ['pipe', 'pipe', 'pipe'] });
        let out = '';
        let err = '';
        child.stdout.on('data', (d: Buffer) => (out += d.toString()));
        child.stderr.on('data', (d: Buffer) => (err += d.toString()));
        child.on('error', reject);
        child.on('close', (code) =>
          code === 0
            ? resolve(JSON.parse(out) as HarnessOutput)
            : reject(new Error(`php exited ${String(code)}: ${err}${out}`)),
        );
        child.stdin.end(JSON.stringify(input));
      });
    };

    it('has no syntax error (php -l)', () => {
      const lint = spawnSync('php', ['-l', PLUGIN], { encoding: 'utf8' });
      expect(lint.stdout).toContain('No syntax errors detected');
      expect(lint.status).toBe(0);
    });

    it('adds the rate Relais prices for the package, with weights converted to kg and the body signed', async () => {
      const output = await run();
      expect(output.class).toBe('Relais_Rates_Shipping_Method');
      expect(output.supports).toContain('shipping-zones');
      expect(output.rates).toEqual([
        {
          id: 'relais_rates:3:relais_standard',
          label: 'Relais — livraison',
          cost: 2000,
          meta_data: { Relais: 'Livraison à Cocody' },
        },
      ]);
      const [request] = output.requests;
      expect(request?.url).toBe(`${stack.web.url}/checkout/woocommerce/${WOO_SHOP_ID}/rates`);
      expect(JSON.parse(request!.body)).toEqual({
        destination: {
          country: 'CI',
          state: 'AB',
          postcode: '',
          city: 'Abidjan',
          address_1: 'Rue des Jardins',
          address_2: 'Cocody Danga',
        },
        items: [{ weight_kg: 0.4, quantity: 2 }],
        currency: 'XOF',
      });
    });

    it("sends the customer's chosen payment method, so a cash-on-delivery customer's rate has the collection fee and a bank-transfer customer's has not", async () => {
      const cod = await run({ paymentMethod: 'cod' });
      expect(JSON.parse(cod.requests[0]!.body)).toMatchObject({ payment_method: 'cod' });
      expect(cod.rates[0]?.cost).toBe(2000);
      const transfer = await run({ paymentMethod: 'bacs' });
      expect(JSON.parse(transfer.requests[0]!.body)).toMatchObject({ payment_method: 'bacs' });
      expect(transfer.rates[0]?.cost).toBe(1500);
    });

    it('adds nothing, and logs why, when Relais answers 503 because the delivery service is down', async () => {
      stack.emulator.faults.add({ operation: 'simulatePrice', fault: { kind: 'status', status: 503 } });
      const output = await run({ destination: { address_2: 'Yopougon Niangon' } });
      expect(output.rates).toEqual([]);
      expect(output.logs).toEqual([
        { level: 'warning', message: 'Relais answered 503: no rate added.', source: 'relais-rates' },
      ]);
    });

    it('adds nothing when the secret is wrong (Relais answers 401)', async () => {
      const output = await run({ settings: { secret: 'not-the-secret' } });
      expect(output.rates).toEqual([]);
      expect(output.logs[0]?.message).toBe('Relais answered 401: no rate added.');
    });

    it('adds nothing when Relais cannot be reached', async () => {
      const output = await run({ settings: { relais_url: `http://127.0.0.1:${String(await freePort())}` } });
      expect(output.rates).toEqual([]);
      expect(output.logs[0]?.message).toMatch(/^Relais did not answer/);
    });

    it('declares to WooCommerce that it is compatible with HPOS (custom_order_tables) and the cart and checkout blocks', async () => {
      const output = await run();
      expect(output.features).toEqual([
        { feature: 'custom_order_tables', plugin_file: PLUGIN, compatible: true },
        { feature: 'cart_checkout_blocks', plugin_file: PLUGIN, compatible: true },
      ]);
    });

    it('shows its method and settings in French on a fr_FR site, from languages/relais-rates-fr_FR.mo', async () => {
      const [english, french] = await Promise.all([run(), run({ locale: 'fr_FR' })]);
      expect(french.textdomains['relais-rates']).toMatch(
        /woocommerce-relais-rates\/languages\/relais-rates-fr_FR\.mo$/,
      );
      expect(french.texts).toMatchObject({
        method_title: 'Relais (prix de livraison en direct)',
        'relais_url.title': 'URL de Relais',
        'timeout.title': 'Délai maximal (secondes)',
      });
      // Every text is translated; only the words French writes the same way stay as they are.
      const unchanged = Object.keys(english.texts).filter((key) => english.texts[key] === french.texts[key]);
      expect(unchanged.sort()).toEqual(['secret.title', 'title']);
    });

    it("signs with the shop's own checkout secret: accepted with it, refused (no rate) with the webhook secret", async () => {
      const own = await run({ settings: { shop_id: WOO_OWN_SECRET_SHOP_ID, secret: stack.wooCheckoutSecret } });
      expect(own.rates).toHaveLength(1);
      const webhook = await run({
        settings: { shop_id: WOO_OWN_SECRET_SHOP_ID, secret: stack.secrets.wooWebhookSecret },
      });
      expect(webhook.rates).toEqual([]);
      expect(webhook.logs[0]?.message).toBe('Relais answered 401: no rate added.');
    });

    it('asks nothing and adds nothing in a store whose currency is not XOF', async () => {
      const output = await run({ currency: 'EUR' });
      expect(output.requests).toEqual([]);
      expect(output.rates).toEqual([]);
    });
  });
}
