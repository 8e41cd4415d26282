/**
 * Shopify access tokens obtained through OAuth, against the Shopify emulator over real HTTP and a real PostgreSQL
 * secret store: renewed before they expire and once after a 401 with the write-back going through, one renewal
 * for two processes, refresh tokens rotated, a refused refresh token named as a reinstall, and no token in the
 * logs or readable in the table.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDatabase, type TestDatabase } from '../../../test/support/postgres.js';
import { Secret } from '../../shops/secret.js';
import { SecretBox } from '../../shops/secret-box.js';
import { startShopifyEmulator, type ShopifyEmulator } from '@relais/emulators/shopify';
import { PostgresShopSecretStore } from '../postgres/pg-shop-secrets.js';
import { capturingLogger } from '../../../test/support/log-capture.js';
import { dispatchInfo } from '../../../test/support/factories.js';
import type { ShopOrderRef } from '../../shops/platforms/writer.js';
import { AccessTokenError, OAuthAccessToken, TOKENS_SECRET, type ShopifyGrant } from './access-token.js';
import { ShopifyAdminClient } from './admin.js';
import { ShopifyWriteError } from './admin-errors.js';
import { ShopifyWriter } from './writer.js';

const SHOP = 'dakar-mode.myshopify.com';
const hex = (bytes = 16) => randomBytes(bytes).toString('hex');
const clientId = `client_${hex(8)}`;
const clientSecret = hex(32);
const HOUR = 3_600_000;

let emulator: ShopifyEmulator;
let db: TestDatabase;
let box: SecretBox;
const { logger, lines: logLines } = capturingLogger();
/** Every token value the tests saw; none may be in the logs or readable in the table. */
const seenTokens = new Set<string>();
/** The providers' clock (the emulator's token clock is moved with it, or alone to make Shopify refuse a token). */
let now = Date.now();

beforeAll(async () => {
  [emulator, db] = await Promise.all([
    startShopifyEmulator({ shops: [{ domain: SHOP, accessToken: `shpat_${hex()}`, clientSecret, clientId }] }),
    startTestDatabase(),
  ]);
  box = new SecretBox([{ id: 'k1', key: randomBytes(32) }]);
});
afterAll(async () => {
  await emulator?.close();
  await db?.stop();
});

function provider(
  shopId: string,
  grant: ShopifyGrant,
  store = new PostgresShopSecretStore(db.pool(), box),
): OAuthAccessToken {
  return new OAuthAccessToken({
    shopId,
    domain: SHOP,
    grant,
    clientId,
    clientSecret: new Secret(clientSecret, 'test'),
    secrets: store,
    logger,
    adminUrl: emulator.adminUrl(SHOP),
    clock: () => now,
    pollMs: 20,
  });
}
function advance(ms: number, options: { shopifyOnly?: boolean } = {}): void {
  emulator.oauth.advance(ms);
  if (!options.shopifyOnly) now += ms;
}
const grants = (type: string) =>
  emulator.oauth.requests().filter((r) => r.grantType === type && r.status === 200).length;
async function tokenOf(source: OAuthAccessToken): Promise<string> {
  const value = (await source.current()).reveal();
  seenTokens.add(value);
  return value;
}
/** A request to the emulated shop's token endpoint, made as the app: its id and secret, then `grant`. */
function askForToken(grant: Record<string, string | null>): Promise<Response> {
  return fetch(`${emulator.adminUrl(SHOP)}/admin/oauth/access_token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_id: clientId, client_secret: clientSecret, ...grant }),
  });
}
/** An install's result, as oauth.ts stores it: an expiring offline token and its refresh token. */
async function installTokens(shopId: string, store: PostgresShopSecretStore): Promise<{ refreshToken: string }> {
  const location = (
    await fetch(`${emulator.oauth.authorizeUrl(SHOP)}?client_id=${clientId}&redirect_uri=http://127.0.0.1:9/cb`, {
      redirect: 'manual',
    })
  ).headers.get('location')!;
  const response = await askForToken({ code: new URL(location).searchParams.get('code'), expiring: '1' });
  const body = (await response.json()) as {
    access_token: string;
    refresh_token: string;
    expires_in: number;
    refresh_token_expires_in: number;
  };
  seenTokens.add(body.access_token).add(body.refresh_token);
  await store.put(
    shopId,
    TOKENS_SECRET,
    JSON.stringify({
      accessToken: body.access_token,
      issuedAt: now,
      expiresAt: now + body.expires_in * 1000,
      refreshToken: body.refresh_token,
      refreshTokenExpiresAt: now + body.refresh_token_expires_in * 1000,
    }),
    { expiresAt: new Date(now + body.expires_in * 1000) },
  );
  return { refreshToken: body.refresh_token };
}

describe('client credentials tokens', () => {
  it('renews a client-credentials token 23 h into its 24 h before using it, and once more when Shopify answers 401, and an order written back across both renewals has its fulfillment and every step', async () => {
    const tokens = provider('cc-shop', 'client_credentials');
    const writer = new ShopifyWriter(
      new ShopifyAdminClient({
        domain: SHOP,
        accessToken: tokens,
        clientSecret: new Secret(clientSecret, 'test'),
        adminUrl: emulator.adminUrl(SHOP),
        logger,
      }),
      logger,
    );
    const order = emulator.createOrder(SHOP, {}, { webhooks: false });
    const ref: ShopOrderRef = {
      shopId: 'cc-shop',
      orderId: String(order.id),
      orderName: order.name,
      externalOrderId: `cc-shop:${order.id}`,
    };
    const dispatch = dispatchInfo();
    const before = grants('client_credentials');

    await writer.recordDispatch(ref, dispatch);
    const first = await tokenOf(tokens);
    expect(grants('client_credentials')).toBe(before + 1);

    advance(23.5 * HOUR); // 30 minutes left: less than 1 h
    await writer.recordStep(ref, 'picked_up', new Date(now).toISOString(), dispatch);
    const second = await tokenOf(tokens);
    expect(second).not.toBe(first);
    expect(grants('client_credentials')).toBe(before + 2);
    expect(emulator.graphqlCalls().filter((c) => c.httpStatus === 401)).toHaveLength(0);

    advance(25 * HOUR, { shopifyOnly: true }); // Shopify's clock passes the expiry; Relais still thinks the token good
    await writer.recordStep(ref, 'in_transit', new Date(now).toISOString(), dispatch);
    const third = await tokenOf(tokens);
    expect(third).not.toBe(second);
    expect(grants('client_credentials')).toBe(before + 3);
    expect(emulator.graphqlCalls().filter((c) => c.httpStatus === 401)).toHaveLength(1);

    const snapshot = emulator.orderSnapshot(SHOP, order.id);
    expect(snapshot.fulfillments).toHaveLength(1);
    expect(snapshot.fulfillments[0]!.events.map((e) => e.status)).toEqual(['CARRIER_PICKED_UP', 'IN_TRANSIT']);

    const stored = await new PostgresShopSecretStore(db.pool(), box).get('cc-shop', TOKENS_SECRET);
    expect(stored?.expiresAt?.getTime()).toBeGreaterThan(now + 23 * HOUR);
  });

  it('makes one call to Shopify when two processes find the same token due at once, and both use the token it brought', async () => {
    const one = provider('twin-shop', 'client_credentials', new PostgresShopSecretStore(db.pool(), box));
    const other = provider('twin-shop', 'client_credentials', new PostgresShopSecretStore(db.pool(), box));
    const before = grants('client_credentials');
    const initial = await Promise.all([tokenOf(one), tokenOf(other), tokenOf(one)]);
    expect(new Set(initial).size).toBe(1);
    expect(grants('client_credentials')).toBe(before + 1);

    advance(23.5 * HOUR);
    const renewed = await Promise.all([tokenOf(one), tokenOf(other), tokenOf(other), tokenOf(one)]);
    expect(new Set(renewed).size).toBe(1);
    expect(renewed[0]).not.toBe(initial[0]);
    expect(grants('client_credentials')).toBe(before + 2);
  });
});

describe('authorization code tokens', () => {
  it('renews an expiring offline token with its refresh token, stores the rotated refresh token, and the emulator then refuses the first refresh token', async () => {
    const store = new PostgresShopSecretStore(db.pool(), box);
    const { refreshToken: rt1 } = await installTokens('installed-shop', store);
    const tokens = provider('installed-shop', 'authorization_code', store);
    const stored = async () =>
      JSON.parse((await store.get('installed-shop', TOKENS_SECRET))!.value.reveal()) as {
        refreshToken: string;
        accessToken: string;
      };

    const installed = await tokenOf(tokens);
    advance(55 * 60_000); // 5 minutes left of 60: less than 10 %
    const renewed = await tokenOf(tokens);
    expect(renewed).not.toBe(installed);
    const rt2 = (await stored()).refreshToken;
    seenTokens.add(rt2);
    expect(rt2).not.toBe(rt1);

    advance(55 * 60_000);
    await tokenOf(tokens);
    const rt3 = (await stored()).refreshToken;
    seenTokens.add(rt3);
    expect(rt3).not.toBe(rt2);
    const retry = await askForToken({ grant_type: 'refresh_token', refresh_token: rt1 });
    expect(retry.status).toBe(400);
    expect(await retry.json()).toMatchObject({ error: 'invalid_grant' });
  });

  it('says the merchant must reinstall when Shopify refuses the refresh token, and the write-back fails without retrying', async () => {
    const store = new PostgresShopSecretStore(db.pool(), box);
    await store.put(
      'revoked-shop',
      TOKENS_SECRET,
      JSON.stringify({
        accessToken: `shpat_${hex()}`,
        issuedAt: now - HOUR,
        expiresAt: now - 1,
        refreshToken: `shprt_${hex()}`,
      }),
    );
    const tokens = provider('revoked-shop', 'authorization_code', store);
    const error = await tokens.current().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AccessTokenError);
    expect((error as AccessTokenError).reinstallRequired).toBe(true);
    expect((error as Error).message).toMatch(
      /refused the refresh token \(HTTP 400 invalid_grant\); the merchant must reinstall the app/,
    );

    const admin = new ShopifyAdminClient({
      domain: SHOP,
      accessToken: tokens,
      clientSecret: new Secret(clientSecret, 'test'),
      adminUrl: emulator.adminUrl(SHOP),
      logger,
    });
    const failed = await admin.orderState('gid://shopify/Order/1').catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(ShopifyWriteError);
    expect((failed as ShopifyWriteError).retryable).toBe(false);
    expect((failed as Error).message).toMatch(/must reinstall/);
  });
});

describe('secrecy', () => {
  it('writes no token value to the logs and keeps none readable in shop_secrets', async () => {
    expect(seenTokens.size).toBeGreaterThan(8);
    expect(logLines.join('\n')).toMatch(/Shopify access token renewed/);
    const { rows } = await db.pool().query<{ sealed: Buffer }>('SELECT sealed FROM shop_secrets');
    for (const token of seenTokens) {
      expect(logLines.join('\n')).not.toContain(token);
      expect(logLines.join('\n')).not.toContain(token.slice(6));
      for (const row of rows) expect(row.sealed.includes(Buffer.from(token.slice(6)))).toBe(false);
    }
  });
});
