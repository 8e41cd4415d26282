/**
 * "Connect a WooCommerce shop" on the Connect page, against the real web process (RELAIS_PUBLIC_URL and
 * RELAIS_SECRET_KEYS set): the page sends the operator to the store's approval page, the store (the WooCommerce
 * emulator) posts the keys to the web process's callback, the browser comes back to its return page, and the shop
 * is listed switched off, its settings to be filled in.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SecretBox } from '../../src/shops/secret-box.js';
import { PostgresShopSecretStore } from '../../src/adapters/postgres/pg-shop-secrets.js';
import { freePort } from '../support/redis.js';
import { randomHex, startTestRelais, WOO_SHOP_ID, type TestRelais } from '../support/relais.js';
import { DashboardSession } from './session.js';

const TOKEN = `dash_${randomHex(16)}`;
const KEYS = `k1:${randomBytes(32).toString('base64')}`;
const SHOP_ID = 'bouake-mode';

let relais: TestRelais;
let session: DashboardSession;

beforeAll(async () => {
  const port = await freePort();
  relais = await startTestRelais({
    dashboardToken: TOKEN,
    secretKeys: KEYS,
    inProcessWorker: false,
    webPort: port,
    publicUrl: `http://127.0.0.1:${port}`,
  });
  session = new DashboardSession(relais.web.url);
  expect((await session.login(TOKEN)).status).toBe(303);
}, 60_000);
afterAll(async () => {
  await relais?.stop();
});

const unescape = (text: string) =>
  text
    .replace(/&amp;/g, '&')
    .replace(/&#39;/g, "'")
    .replace(/&quot;/g, '"');

describe('the Connect page: connecting a WooCommerce store', () => {
  it('sends the operator to the store, receives and seals its keys on the callback, comes back to a page saying so, and lists the shop switched off', async () => {
    const csrf = await session.csrf('/dashboard/shops');
    const begun = await session.request('/dashboard/shops/connect/woocommerce', {
      form: { shopId: SHOP_ID, storeUrl: relais.woo!.siteUrl(WOO_SHOP_ID), _csrf: csrf },
    });
    expect(begun.status).toBe(200);
    const authorize = unescape(/<a id="continue" href="([^"]+)"/.exec(begun.body)![1]!);
    expect(authorize.startsWith(`${relais.woo!.siteUrl(WOO_SHOP_ID)}/wc-auth/v1/authorize?`)).toBe(true);

    // The merchant on the store: its approval page, then Approve.
    const page = await (await fetch(authorize)).text();
    const fields = new URLSearchParams();
    for (const match of page.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g))
      fields.set(match[1]!, unescape(match[2]!));
    fields.set('decision', 'approve');
    const approved = await fetch(unescape(/<form method="post" action="([^"]+)"/.exec(page)![1]!), {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: fields.toString(),
      redirect: 'manual',
    });
    expect(approved.status).toBe(302);

    // Back from another site: no dashboard cookie comes along, and the page still says what happened.
    const back = await fetch(approved.headers.get('location')!);
    expect(back.status).toBe(200);
    const returned = await back.text();
    expect(returned).toContain('data-outcome="connected"');
    expect(returned).toContain(`/dashboard/shops/${SHOP_ID}`);

    const secrets = new PostgresShopSecretStore(relais.db.pool(), SecretBox.fromSetting(KEYS));
    const key = await secrets.get(SHOP_ID, 'woocommerce.consumerKey');
    expect(key?.value.reveal()).toBe(relais.woo!.issuedKeys(WOO_SHOP_ID).at(-1)!.consumerKey);
    expect(returned).not.toContain(key!.value.reveal());
    const listed = await session.request('/dashboard/shops');
    expect(listed.body).toMatch(new RegExp(`${SHOP_ID}</td><td>woocommerce</td>[\\s\\S]*?badge warn">off`));
  });

  it('refuses, on the Connect page with the reason, another store under the id of the connected shop, which keeps its store', async () => {
    const other = 'http://127.0.0.1:9/shops/another-store';
    const csrf = await session.csrf('/dashboard/shops');
    const begun = await session.request('/dashboard/shops/connect/woocommerce', {
      form: { shopId: SHOP_ID, storeUrl: other, _csrf: csrf },
    });
    expect(begun.status).toBe(303);
    const page = unescape((await session.request(begun.location!)).body);
    expect(page).toContain(`shop id ${SHOP_ID} is connected to ${relais.woo!.siteUrl(WOO_SHOP_ID)}`);
    expect(page).toContain('choose another shop id');
    const shop = (await relais.web.runtime.shopDirectory.list()).find((s) => s.id === SHOP_ID)!;
    expect((shop.document.woocommerce as Record<string, unknown>).url).toBe(relais.woo!.siteUrl(WOO_SHOP_ID));
  });
});
