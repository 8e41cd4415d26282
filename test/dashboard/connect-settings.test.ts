/**
 * The Connect page's settings, over real HTTP against the real web process: a Shopify shop connected (saved
 * switched off with its platform part only, as the install leaves it) gets its settings from the form, validated
 * as the registry file is; its dispatch key is sealed and never shown back; it is switched on only once the
 * doctor's checks pass (the shop's Admin API on a Shopify emulator, the key on the dispatch emulator).
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startShopifyEmulator, type ShopifyEmulator } from '@relais/emulators/shopify';
import { PostgresShopSecretStore } from '../../src/adapters/postgres/pg-shop-secrets.js';
import { PostgresShopDirectory } from '../../src/adapters/postgres/pg-shops.js';
import { connectSettingsForm, saveInstalledShopifyShop } from '../support/installed-shopify-shop.js';
import { randomHex, startTestRelais, waitFor, type TestRelais } from '../support/relais.js';
import { DashboardSession } from './session.js';

const TOKEN = `dash_${randomHex(16)}`;
const KEYS = `k1:${randomBytes(32).toString('base64')}`;
const SHOP_ID = 'thies-boutique';
const DOMAIN = 'thies-boutique.myshopify.com';
const shopifyToken = `shpat_${randomHex(16)}`;
const shopifySecret = randomHex(32);

let shopify: ShopifyEmulator;
let relais: TestRelais;
let directory: PostgresShopDirectory;
let secrets: PostgresShopSecretStore;
let session: DashboardSession;

beforeAll(async () => {
  shopify = await startShopifyEmulator({
    shops: [{ domain: DOMAIN, accessToken: shopifyToken, clientSecret: shopifySecret }],
  });
  relais = await startTestRelais({ dashboardToken: TOKEN, secretKeys: KEYS, inProcessWorker: false });
  // What the Shopify install leaves: the shop's platform part, its token sealed, switched off.
  ({ directory, secrets } = await saveInstalledShopifyShop(relais, KEYS, {
    id: SHOP_ID,
    domain: DOMAIN,
    accessToken: shopifyToken,
    webhookSecret: shopifySecret,
    adminUrl: shopify.adminUrl(DOMAIN),
  }));
  session = new DashboardSession(relais.web.url);
  expect((await session.login(TOKEN)).status).toBe(303);
}, 60_000);

afterAll(async () => {
  await relais?.stop();
  await shopify?.close();
});

const settingsPath = `/dashboard/shops/${SHOP_ID}`;

const settings = (overrides: Record<string, string> = {}) => connectSettingsForm(relais, overrides);

async function post(path: string, form: Record<string, string>) {
  return session.request(path, { form: { ...form, _csrf: await session.csrf(settingsPath) } });
}

const connected = async () => (await directory.list()).find((s) => s.id === SHOP_ID)!;

describe('the Connect page: a connected shop’s settings', () => {
  it('lists the connected shop, switched off, with a link to its settings', async () => {
    const page = await session.request('/dashboard/shops');
    expect(page.status).toBe(200);
    expect(page.body).toContain(DOMAIN);
    expect(page.body).toMatch(/badge warn">off</);
    expect(page.body).toContain(`href="${settingsPath}"`);
  });

  it('refuses settings without the delivery service URL with the registry file’s own message, and saves nothing', async () => {
    const answer = await post(settingsPath, settings({ dispatchBaseUrl: '' }));
    expect(answer.status).toBe(422);
    expect(answer.body).toContain('dispatch.baseUrl');
    expect((await connected()).document.pickup).toBeUndefined();
    expect(await secrets.get(SHOP_ID, 'dispatch.apiKey')).toBeUndefined();
  });

  it('seals the dispatch key: the page never shows it, the shop row holds a reference, and an empty key field keeps it', async () => {
    const saved = await post(settingsPath, settings());
    expect(saved.status).toBe(303);
    const page = await session.request(settingsPath);
    expect(page.body).toContain('Thiès Boutique');
    expect(page.body).not.toContain(relais.secrets.dispatchApiKey);
    expect(page.body).toContain('stored; leave empty to keep it');
    const row = await connected();
    expect(JSON.stringify(row.document)).not.toContain(relais.secrets.dispatchApiKey);
    expect(row.document.dispatch).toMatchObject({ apiKey: { stored: 'dispatch.apiKey' } });
    expect((await secrets.get(SHOP_ID, 'dispatch.apiKey'))?.value.reveal()).toBe(relais.secrets.dispatchApiKey);

    expect((await post(settingsPath, settings({ dispatchApiKey: '', name: 'Thiès Boutique SARL' }))).status).toBe(303);
    expect((await secrets.get(SHOP_ID, 'dispatch.apiKey'))?.value.reveal()).toBe(relais.secrets.dispatchApiKey);
    expect((await connected()).document.name).toBe('Thiès Boutique SARL');
  });

  it('keeps the shop off while a doctor check fails, naming it, and switches it on once they all pass', async () => {
    await post(settingsPath, settings({ pickupNeighbourhood: 'Quartier Inconnu' }));
    const refused = await post(`${settingsPath}/on`, {});
    expect(refused.status).toBe(303);
    const after = await session.request(settingsPath);
    expect(after.body).toContain('Not switched on');
    expect(after.body).toContain('pickup neighbourhood');
    expect((await connected()).enabled).toBe(false);

    await post(settingsPath, settings({ dispatchApiKey: '' }));
    await post(`${settingsPath}/on`, {});
    const on = await session.request(settingsPath);
    expect(on.body).toContain('Checks passed');
    expect((await connected()).enabled).toBe(true);
  });

  it("learns the shop's service map in the background once switched on, and shows how far it went", async () => {
    const page = await waitFor(
      async () => {
        const body = (await session.request(settingsPath)).body;
        return body.includes('id="service-map"') && body;
      },
      { what: 'the service map card' },
    );
    expect(page).toMatch(/(Learning|Learned) \(.*\): \d+ of \d+ names asked: \d+ priced, \d+ at the fallback tariff/);
  });

  it("links its settings page to its Service map page, which shows the learning's progress and links back", async () => {
    const settingsPage = (await session.request(settingsPath)).body;
    const href = `/dashboard/service-map?shop=${SHOP_ID}`;
    expect(settingsPage).toContain(`href="${href}"`);
    const mapPage = await session.request(href);
    expect(mapPage.status).toBe(200);
    expect(mapPage.body).toContain('id="learn-progress"');
    expect(mapPage.body).toMatch(/(Learning|Learned) \(.*\): \d+ of \d+ names asked/);
    expect(mapPage.body).toContain(`href="${settingsPath}"`);
  });
});
