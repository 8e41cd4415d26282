/**
 * The Shopify emulator's OAuth doors against Shopify's published contract, over real HTTP: the authorize
 * redirect signed as Shopify signs it (checked with @shopify/shopify-api's own validateHmac), the token endpoint's
 * three grants, expiring tokens refused with Shopify's 401 answer, and refresh-token rotation.
 */
import { randomBytes } from 'node:crypto';
import '@shopify/shopify-api/adapters/node';
import { ApiVersion, LogSeverity, shopifyApi } from '@shopify/shopify-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startShopifyEmulator, type ShopifyEmulator } from '@relais/emulators/shopify';

const SHOP = 'dakar-mode.myshopify.com';
const hex = (bytes = 16) => randomBytes(bytes).toString('hex');
const staticToken = `shpat_${hex()}`;
const clientSecret = hex(32);
const clientId = `client_${hex(8)}`;
const INVALID = '[API] Invalid API key or access token (unrecognized login or wrong password)';

let emulator: ShopifyEmulator;
beforeAll(async () => {
  emulator = await startShopifyEmulator({
    shops: [{ domain: SHOP, accessToken: staticToken, clientSecret, clientId, scopes: 'read_orders,write_orders' }],
  });
});
afterAll(async () => {
  await emulator.close();
});

const tokenUrl = () => `${emulator.adminUrl(SHOP)}/admin/oauth/access_token`;
async function token(body: Record<string, string>): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(tokenUrl(), {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}
async function shopQuery(accessToken: string): Promise<{ status: number; body: unknown }> {
  const response = await fetch(emulator.graphqlUrl(SHOP), {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-shopify-access-token': accessToken },
    body: JSON.stringify({ query: '{ shop { name } }' }),
  });
  return { status: response.status, body: await response.json() };
}
async function authorize(params: Record<string, string>): Promise<Response> {
  return fetch(`${emulator.oauth.authorizeUrl(SHOP)}?${new URLSearchParams(params)}`, { redirect: 'manual' });
}

describe('Shopify emulator OAuth', () => {
  it('redirects an authorize request to redirect_uri with code, host, shop, state, timestamp and an hmac that @shopify/shopify-api validates with the client secret', async () => {
    const response = await authorize({
      client_id: clientId,
      scope: 'read_orders',
      redirect_uri: 'http://127.0.0.1:9/auth/callback',
      state: 'nonce-123',
      'grant_options[]': '',
    });
    expect(response.status).toBe(302);
    const location = new URL(response.headers.get('location')!);
    expect(`${location.origin}${location.pathname}`).toBe('http://127.0.0.1:9/auth/callback');
    const query = Object.fromEntries(location.searchParams);
    expect(Object.keys(query).sort()).toEqual(['code', 'hmac', 'host', 'shop', 'state', 'timestamp']);
    expect(query.shop).toBe(SHOP);
    expect(query.state).toBe('nonce-123');
    const app = (secret: string) =>
      shopifyApi({
        apiKey: clientId,
        apiSecretKey: secret,
        apiVersion: ApiVersion.October26,
        hostName: '127.0.0.1',
        isEmbeddedApp: false,
        logger: { level: LogSeverity.Error, log: () => undefined },
      });
    expect(await app(clientSecret).utils.validateHmac(query)).toBe(true);
    expect(await app(hex(32)).utils.validateHmac(query)).toBe(false);
  });

  it("refuses an authorize request with another app's client_id or without a redirect_uri, redirecting nowhere", async () => {
    expect((await authorize({ client_id: 'someone-else', redirect_uri: 'http://127.0.0.1:9/cb' })).status).toBe(400);
    expect((await authorize({ client_id: clientId })).status).toBe(400);
  });

  it('exchanges a code once: non-expiring without expiring=1, 3600 s with a 90-day refresh token with it; a used code is refused', async () => {
    const codeOf = async () =>
      new URL(
        (await authorize({ client_id: clientId, redirect_uri: 'http://127.0.0.1:9/cb', state: 's' })).headers.get(
          'location',
        )!,
      ).searchParams.get('code')!;
    const plainCode = await codeOf();
    const plain = await token({ client_id: clientId, client_secret: clientSecret, code: plainCode });
    expect(plain.status).toBe(200);
    expect(Object.keys(plain.body).sort()).toEqual(['access_token', 'scope']);
    expect((await token({ client_id: clientId, client_secret: clientSecret, code: plainCode })).body.error).toBe(
      'invalid_request',
    );

    const expiring = await token({
      client_id: clientId,
      client_secret: clientSecret,
      code: await codeOf(),
      expiring: '1',
    });
    expect(expiring.status).toBe(200);
    expect(expiring.body).toMatchObject({
      expires_in: 3600,
      refresh_token_expires_in: 7_776_000,
      scope: 'read_orders,write_orders',
    });
    expect(String(expiring.body.refresh_token)).toMatch(/^shprt_/);
    expect((await shopQuery(String(expiring.body.access_token))).status).toBe(200);
    expect((await token({ client_id: clientId, client_secret: hex(32), code: await codeOf() })).status).toBe(401);
  });

  it("issues a client-credentials token for 86399 s that the Admin API accepts, then refuses with Shopify's 401 answer once the token clock passes its expiry; the static token keeps working", async () => {
    const granted = await token({ client_id: clientId, client_secret: clientSecret, grant_type: 'client_credentials' });
    expect(granted.status).toBe(200);
    expect(granted.body).toMatchObject({ expires_in: 86_399, scope: 'read_orders,write_orders' });
    const accessToken = String(granted.body.access_token);
    expect((await shopQuery(accessToken)).status).toBe(200);
    emulator.oauth.advance(86_400_000);
    expect(await shopQuery(accessToken)).toEqual({ status: 401, body: { errors: INVALID } });
    expect((await shopQuery(staticToken)).status).toBe(200);
    expect((await shopQuery(`shpat_${hex()}`)).status).toBe(401);
    expect(
      (await token({ client_id: clientId, client_secret: 'wrong', grant_type: 'client_credentials' })).body.error,
    ).toBe('invalid_client');
  });

  it('rotates refresh tokens: the previous one stays usable until its replacement is used, then is refused for good', async () => {
    const location = (await authorize({ client_id: clientId, redirect_uri: 'http://127.0.0.1:9/cb' })).headers.get(
      'location',
    )!;
    const first = await token({
      client_id: clientId,
      client_secret: clientSecret,
      code: new URL(location).searchParams.get('code')!,
      expiring: '1',
    });
    const rt1 = String(first.body.refresh_token);
    const second = await token({
      client_id: clientId,
      client_secret: clientSecret,
      grant_type: 'refresh_token',
      refresh_token: rt1,
    });
    expect(second.status).toBe(200);
    const rt2 = String(second.body.refresh_token);
    expect(rt2).not.toBe(rt1);
    expect(second.body.expires_in).toBe(3600);
    expect((await shopQuery(String(second.body.access_token))).status).toBe(200);
    const third = await token({
      client_id: clientId,
      client_secret: clientSecret,
      grant_type: 'refresh_token',
      refresh_token: rt2,
    });
    expect(third.status).toBe(200);
    const refused = await token({
      client_id: clientId,
      client_secret: clientSecret,
      grant_type: 'refresh_token',
      refresh_token: rt1,
    });
    expect(refused).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    expect(
      emulator.oauth
        .requests()
        .filter((r) => r.grantType === 'refresh_token')
        .map((r) => r.status),
    ).toEqual([200, 200, 400]);
    expect(JSON.stringify(emulator.oauth.requests())).not.toContain(rt1);
  });
});
