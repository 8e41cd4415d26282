/**
 * Installing the Shopify app through the authorization code grant, against the Shopify emulator over real HTTP,
 * with the state in a real Redis and the tokens in a real PostgreSQL: the whole install, then every way a
 * callback is refused (forged hmac, unknown, replayed, foreign or other-session state, a shop that is not
 * *.myshopify.com).
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDatabase, type TestDatabase } from '../../../test/support/postgres.js';
import { startRedis, type TestRedis } from '../../../test/support/redis.js';
import { Secret } from '../../shops/secret.js';
import { SecretBox } from '../../shops/secret-box.js';
import { signOAuthQuery, startShopifyEmulator, type ShopifyEmulator } from '@relais/emulators/shopify';
import { PostgresShopSecretStore } from '../postgres/pg-shop-secrets.js';
import { createLogger } from '../../log.js';
import { OAuthAccessToken, TOKENS_SECRET } from './access-token.js';
import { ShopifyAdminClient } from './admin.js';
import { RedisInstallStates, ShopifyInstall, ShopifyInstallError } from './oauth.js';

const SHOP = 'dakar-mode.myshopify.com';
const OTHER = 'thies-bazin.myshopify.com';
const hex = (bytes = 16) => randomBytes(bytes).toString('hex');
const clientId = `client_${hex(8)}`;
const clientSecret = hex(32);
const logger = createLogger({ level: 'silent' });

let emulator: ShopifyEmulator;
let db: TestDatabase;
let redis: TestRedis;
let secrets: PostgresShopSecretStore;
let install: ShopifyInstall;

beforeAll(async () => {
  [emulator, db, redis] = await Promise.all([
    startShopifyEmulator({
      shops: [
        { domain: SHOP, accessToken: `shpat_${hex()}`, clientSecret, clientId },
        { domain: OTHER, accessToken: `shpat_${hex()}`, clientSecret, clientId },
      ],
    }),
    startTestDatabase(),
    startRedis(),
  ]);
  secrets = new PostgresShopSecretStore(db.pool(), new SecretBox([{ id: 'k1', key: randomBytes(32) }]));
  install = new ShopifyInstall({
    clientId,
    clientSecret: new Secret(clientSecret, 'test'),
    scopes: ['read_orders', 'write_orders'],
    redirectUri: 'http://127.0.0.1:9/connect/shopify/callback',
    states: new RedisInstallStates(redis.client(), redis.prefix),
    secrets,
    logger,
    adminUrlFor: (domain) => emulator.adminUrl(domain),
  });
});
afterAll(async () => {
  await emulator?.close();
  await redis?.stop();
  await db?.stop();
});

/** The merchant's browser: begin's URL, the emulator's approval, the redirect back (not followed). */
async function approve(url: string): Promise<URLSearchParams> {
  const response = await fetch(url, { redirect: 'manual' });
  expect(response.status).toBe(302);
  const location = new URL(response.headers.get('location')!);
  expect(`${location.origin}${location.pathname}`).toBe('http://127.0.0.1:9/connect/shopify/callback');
  return location.searchParams;
}
const refusal = async (promise: Promise<unknown>) => {
  const error = await promise.catch((e: unknown) => e);
  expect(error).toBeInstanceOf(ShopifyInstallError);
  return (error as ShopifyInstallError).reason;
};
/** The callback's parameters with one changed and signed again with the app's secret (a forgery by someone who has it). */
function resigned(query: URLSearchParams, changes: Record<string, string>): URLSearchParams {
  const params = { ...Object.fromEntries(query), ...changes };
  delete (params as Record<string, string | undefined>).hmac;
  return new URLSearchParams({ ...params, hmac: signOAuthQuery(params, clientSecret) });
}

describe('Shopify app install (authorization code)', () => {
  it("begins, is approved by the emulator, and a callback with a valid hmac stores a sealed expiring token and refresh token that the shop's token provider then uses", async () => {
    const { url, state } = await install.begin({ shop: SHOP, shopId: 'dakar-mode', binding: 'session-1' });
    expect(new URL(url).searchParams.get('state')).toBe(state);
    expect(new URL(url).searchParams.get('scope')).toBe('read_orders,write_orders');
    const query = await approve(url);
    const installed = await install.callback(query, { binding: 'session-1' });
    expect(installed).toMatchObject({ shopId: 'dakar-mode', domain: SHOP });
    expect(installed.expiresAt.getTime() - Date.now()).toBeGreaterThan(3_500_000);

    const stored = await secrets.get('dakar-mode', TOKENS_SECRET);
    const tokens = JSON.parse(stored!.value.reveal()) as { accessToken: string; refreshToken: string };
    expect(tokens.refreshToken).toMatch(/^shprt_/);
    const { rows } = await db
      .pool()
      .query<{ sealed: Buffer }>("SELECT sealed FROM shop_secrets WHERE shop_id = 'dakar-mode'");
    expect(rows[0]!.sealed.includes(Buffer.from(tokens.accessToken.slice(6)))).toBe(false);
    expect(rows[0]!.sealed.includes(Buffer.from(tokens.refreshToken.slice(6)))).toBe(false);
    expect(emulator.oauth.requests().at(-1)).toMatchObject({ grantType: 'authorization_code', status: 200 });

    const provider = new OAuthAccessToken({
      shopId: 'dakar-mode',
      domain: SHOP,
      grant: 'authorization_code',
      clientId,
      clientSecret: new Secret(clientSecret, 'test'),
      secrets,
      logger,
      adminUrl: emulator.adminUrl(SHOP),
    });
    expect((await provider.current()).reveal()).toBe(tokens.accessToken);
    const admin = new ShopifyAdminClient({
      domain: SHOP,
      accessToken: provider,
      clientSecret: new Secret(clientSecret, 'test'),
      adminUrl: emulator.adminUrl(SHOP),
      logger,
    });
    expect(await admin.orderState('gid://shopify/Order/1')).toBeUndefined();
  });

  it('refuses a callback whose hmac is forged or missing, or whose code was changed after signing, and keeps the state for the real one', async () => {
    const { url } = await install.begin({ shop: SHOP, shopId: 'forged' });
    const query = await approve(url);
    const forged = new URLSearchParams(query);
    forged.set('hmac', signOAuthQuery(Object.fromEntries(query), hex(32)));
    expect(await refusal(install.callback(forged))).toBe('invalid_hmac');
    const changed = new URLSearchParams(query);
    changed.set('code', hex());
    expect(await refusal(install.callback(changed))).toBe('invalid_hmac');
    const unsigned = new URLSearchParams(query);
    unsigned.delete('hmac');
    expect(await refusal(install.callback(unsigned))).toBe('invalid_hmac');
    expect((await install.callback(query)).shopId).toBe('forged');
  });

  it('refuses a state Relais never issued, a state used twice, a state begun for another shop or in another session', async () => {
    const { url } = await install.begin({ shop: SHOP, shopId: 'states' });
    const query = await approve(url);
    expect(await refusal(install.callback(resigned(query, { state: hex(32) })))).toBe('unknown_state');
    await install.callback(query);
    expect(await refusal(install.callback(query))).toBe('unknown_state');

    const other = await approve((await install.begin({ shop: OTHER, shopId: 'other' })).url);
    expect(await refusal(install.callback(resigned(other, { shop: SHOP })))).toBe('state_mismatch');

    const bound = await approve((await install.begin({ shop: SHOP, shopId: 'bound', binding: 'session-a' })).url);
    expect(await refusal(install.callback(bound, { binding: 'session-b' }))).toBe('state_mismatch');
    expect(await secrets.get('bound', TOKENS_SECRET)).toBeUndefined();
  });

  it('refuses to begin or finish an install for a shop that is not a *.myshopify.com domain', async () => {
    expect(await refusal(install.begin({ shop: 'evil.example.com', shopId: 'x' }))).toBe('invalid_shop');
    expect(await refusal(install.begin({ shop: 'dakar-mode.myshopify.com.evil.example', shopId: 'x' }))).toBe(
      'invalid_shop',
    );
    const query = await approve((await install.begin({ shop: SHOP, shopId: 'shape' })).url);
    expect(await refusal(install.callback(resigned(query, { shop: 'evil.example.com' })))).toBe('invalid_shop');
  });
});
