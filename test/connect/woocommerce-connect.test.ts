/**
 * Connecting a WooCommerce store through its app authorisation, end to end over real HTTP: Relais's connect routes
 * on a real Express server, the WooCommerce emulator as the store (its approval page submitted as a browser does,
 * its callback POSTed to Relais), the user_id in a real Redis, the keys sealed in a real PostgreSQL. Then every way
 * a callback is refused with nothing stored: an unknown, replayed or denied user_id, read-only keys, keys the store
 * does not accept.
 */
import { randomBytes } from 'node:crypto';
import type { IncomingHttpHeaders, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWooEmulator, type WooEmulator } from '@relais/emulators/woocommerce';
import { startTestDatabase, type TestDatabase } from '../support/postgres.js';
import { startRedis, type TestRedis } from '../support/redis.js';
import { SecretBox } from '../../src/shops/secret-box.js';
import { wooConnectRoutes } from '../../src/http/routes/woo-connect.js';
import { PostgresShopDirectory } from '../../src/adapters/postgres/pg-shops.js';
import { PostgresShopSecretStore } from '../../src/adapters/postgres/pg-shop-secrets.js';
import { createLogger } from '../../src/log.js';
import { capturingLogger } from '../support/log-capture.js';
import { RedisConnectStates } from '../../src/adapters/woocommerce/connect-states.js';
import { WOO_STORED, WooConnect, WooConnectError } from '../../src/adapters/woocommerce/connect.js';
import { createWooOperatorRest } from '../../src/adapters/woocommerce/rest.js';
import { verifyWooWebhook } from '../../src/adapters/woocommerce/verify.js';

const STORE = 'abidjan-pagne';
/** Another merchant's store on the same emulator. */
const OTHER_STORE = 'dakar-wax';
let woo: WooEmulator;
let db: TestDatabase;
let redis: TestRedis;
let server: Server;
let publicUrl: string;
let secrets: PostgresShopSecretStore;
let directory: PostgresShopDirectory;
let connect: WooConnect;
const { logger, lines: logLines } = capturingLogger();
const deliveries: { shopId: string; headers: IncomingHttpHeaders; body: Buffer }[] = [];

beforeAll(async () => {
  [woo, db, redis] = await Promise.all([
    startWooEmulator({
      shops: [
        { id: STORE, consumerKey: `ck_${hex(20)}`, consumerSecret: `cs_${hex(20)}` },
        { id: OTHER_STORE, consumerKey: `ck_${hex(20)}`, consumerSecret: `cs_${hex(20)}` },
      ],
    }),
    startTestDatabase(),
    startRedis(),
  ]);
  secrets = new PostgresShopSecretStore(db.pool(), new SecretBox([{ id: 'k1', key: randomBytes(32) }]));
  directory = new PostgresShopDirectory(db.pool());
  const app = express();
  // Where the store's order webhooks land: recorded, to check them against the sealed webhook secret.
  app.post('/webhooks/woocommerce/:shopId', express.raw({ type: () => true }), (req, res) => {
    deliveries.push({ shopId: String(req.params.shopId), headers: req.headers, body: req.body as Buffer });
    res.json({ ok: true });
  });
  // The routes need the public URL, known once the server listens.
  const late: { routes?: express.Router } = {};
  app.use((req, res, next) => (late.routes ? late.routes(req, res, next) : next()));
  server = await new Promise<Server>((resolve) => {
    const listening = app.listen(0, '127.0.0.1', () => resolve(listening));
  });
  publicUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  connect = new WooConnect({
    publicUrl,
    states: new RedisConnectStates(redis.client(), redis.prefix),
    secrets,
    directory,
    logger,
  });
  late.routes = wooConnectRoutes({ connect, logger });
});
afterAll(async () => {
  await woo?.close();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  await redis?.stop();
  await db?.stop();
});

function hex(bytes: number): string {
  return randomBytes(bytes).toString('hex');
}

/** The merchant's browser on the store: the approval page, then its Approve or Deny button (redirect not followed). */
async function decide(url: string, decision: 'approve' | 'deny'): Promise<Response> {
  const page = await fetch(url);
  expect(page.status).toBe(200);
  const html = await page.text();
  const fields = new URLSearchParams();
  for (const match of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g))
    fields.set(match[1]!, match[2]!.replace(/&amp;/g, '&'));
  fields.set('decision', decision);
  return fetch(/<form method="post" action="([^"]+)"/.exec(html)![1]!, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: fields.toString(),
    redirect: 'manual',
  });
}

/** WooCommerce's callback body; made-up keys unless given. */
const keysBody = (userId: string, keys?: { keyId: number; consumerKey: string; consumerSecret: string }) => ({
  key_id: keys?.keyId ?? 99,
  user_id: userId,
  consumer_key: keys?.consumerKey ?? `ck_${hex(20)}`,
  consumer_secret: keys?.consumerSecret ?? `cs_${hex(20)}`,
  key_permissions: 'read_write',
});

/** What a forger (or a replay) POSTs to Relais's callback. */
const postCallback = (body: Record<string, unknown>) =>
  fetch(`${publicUrl}/connect/woocommerce/callback`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json;charset=UTF-8' },
    body: JSON.stringify(body),
  });

const returnPage = async (query: string) => {
  const page = await fetch(`${publicUrl}/connect/woocommerce/return?${query}`);
  const html = await page.text();
  return { status: page.status, html, outcome: /data-outcome="([a-z_]+)"/.exec(html)?.[1] };
};

const secretRows = async () =>
  (await db.pool().query<{ n: string }>('SELECT count(*) AS n FROM shop_secrets')).rows[0]!.n;
const userIdOf = (url: string) => new URL(url).searchParams.get('user_id')!;

describe('connecting a WooCommerce store through its app authorisation', () => {
  it('authorises, receives the keys on the callback, checks and seals them, saves the shop switched off, registers the order webhooks, and the stored keys and webhook secret work', async () => {
    const { url, userId } = await connect.begin({ storeUrl: `${woo.siteUrl(STORE)}/`, shopId: STORE, binding: 's1' });
    const asked = new URL(url);
    expect(`${asked.origin}${asked.pathname}`).toBe(`${woo.siteUrl(STORE)}/wc-auth/v1/authorize`);
    expect(Object.fromEntries(asked.searchParams)).toEqual({
      app_name: 'Relais',
      scope: 'read_write',
      user_id: userId,
      return_url: `${publicUrl}/connect/woocommerce/return`,
      callback_url: `${publicUrl}/connect/woocommerce/callback`,
    });
    expect(userId).toMatch(/^[0-9a-f]{64}$/);

    const approved = await decide(url, 'approve');
    expect(approved.status).toBe(302);
    const back = new URL(approved.headers.get('location')!);
    expect(back.searchParams.get('success')).toBe('1');

    const issued = woo.issuedKeys(STORE).at(-1)!;
    const key = await secrets.get(STORE, WOO_STORED.consumerKey);
    const secret = await secrets.get(STORE, WOO_STORED.consumerSecret);
    const webhookSecret = await secrets.get(STORE, WOO_STORED.webhookSecret);
    expect(key?.value.reveal()).toBe(issued.consumerKey);
    expect(secret?.value.reveal()).toBe(issued.consumerSecret);
    const { rows } = await db
      .pool()
      .query<{ sealed: Buffer }>('SELECT sealed FROM shop_secrets WHERE shop_id = $1', [STORE]);
    expect(rows).toHaveLength(3);
    for (const plain of [issued.consumerKey, issued.consumerSecret, webhookSecret!.value.reveal()])
      expect(rows.some((row) => row.sealed.includes(Buffer.from(plain)))).toBe(false);

    const saved = (await directory.list()).find((shop) => shop.id === STORE)!;
    expect(saved).toMatchObject({ platform: 'woocommerce', enabled: false });
    // The WooCommerce part only, every secret a reference to the sealed store; the settings come later.
    expect(Object.keys(saved.document).sort()).toEqual(['id', 'platform', 'woocommerce']);
    const part = saved.document.woocommerce as Record<string, unknown>;
    expect(Object.keys(part).sort()).toEqual(['consumerKey', 'consumerSecret', 'url', 'webhookSecret']);
    expect(part.url).toBe(woo.siteUrl(STORE));
    for (const field of ['consumerKey', 'consumerSecret', 'webhookSecret'])
      expect(part[field]).toEqual({ stored: `woocommerce.${field}` });

    const hookUrl = `${publicUrl}/webhooks/woocommerce/${STORE}`;
    expect(
      woo
        .webhooks(STORE)
        .map((h) => [h.topic, h.deliveryUrl, h.status])
        .sort(),
    ).toEqual([
      ['order.created', hookUrl, 'active'],
      ['order.deleted', hookUrl, 'active'],
      ['order.restored', hookUrl, 'active'],
      ['order.updated', hookUrl, 'active'],
    ]);

    // The stored keys, as Relais reads them, work on the store; the store signs with the sealed webhook secret.
    const rest = createWooOperatorRest({
      url: woo.siteUrl(STORE),
      consumerKey: key!.value,
      consumerSecret: secret!.value,
    });
    expect((await rest.getSetting('general', 'woocommerce_currency')).value).toBe('XOF');
    const order = await woo.createOrder(STORE);
    const signed = deliveries.filter((d) => d.headers['x-wc-webhook-topic'] === 'order.created');
    expect(signed).toHaveLength(1);
    expect(
      verifyWooWebhook({
        rawBody: signed[0]!.body,
        headers: signed[0]!.headers,
        secret: webhookSecret!.value.reveal(),
        contentType: 'application/json',
      }),
    ).toMatchObject({ ok: true, topic: 'order.created' });
    expect(JSON.parse(signed[0]!.body.toString('utf8'))).toMatchObject({ id: order.id });

    const page = await returnPage(back.search.slice(1));
    expect(page).toMatchObject({ status: 200, outcome: 'connected' });
    expect(page.html).toContain(`/dashboard/shops/${STORE}`);
    const everything = [page.html, ...logLines].join('\n');
    for (const plain of [issued.consumerKey, issued.consumerSecret, webhookSecret!.value.reveal()])
      expect(everything).not.toContain(plain);
  });

  it('refuses a replayed callback (the user_id already used) with 400, keeping the keys first stored', async () => {
    const { url } = await connect.begin({ storeUrl: woo.siteUrl(STORE), shopId: 'replayed' });
    expect((await decide(url, 'approve')).status).toBe(302);
    const issued = woo.issuedKeys(STORE).at(-1)!;
    const stored = (await secrets.get('replayed', WOO_STORED.consumerKey))!.value.reveal();
    expect(stored).toBe(issued.consumerKey);

    const replay = await postCallback(keysBody(userIdOf(url)));
    expect(replay.status).toBe(400);
    expect(await replay.json()).toMatchObject({ error: 'unknown_state' });
    expect((await secrets.get('replayed', WOO_STORED.consumerKey))!.value.reveal()).toBe(stored);
  });

  it('refuses a callback whose user_id Relais never issued, or that is not WooCommerce’s shape, storing nothing', async () => {
    const before = await secretRows();
    const shops = (await directory.list()).length;
    const issued = woo.issuedKeys(STORE).at(-1)!;
    const forged = await postCallback(keysBody(hex(32), issued));
    expect(forged.status).toBe(400);
    expect(await forged.json()).toMatchObject({ error: 'unknown_state' });
    expect((await postCallback({ user_id: hex(32) })).status).toBe(400);
    const notJson = await fetch(`${publicUrl}/connect/woocommerce/callback`, { method: 'POST', body: 'key_id=1' });
    expect(notJson.status).toBe(400);
    expect(await secretRows()).toBe(before);
    expect((await directory.list()).length).toBe(shops);
  });

  it('refuses read-only keys (the scope changed on the way): 400, so WooCommerce deletes the key and shows its error; nothing stored', async () => {
    const { url } = await connect.begin({ storeUrl: woo.siteUrl(STORE), shopId: 'read-only' });
    const tampered = new URL(url);
    tampered.searchParams.set('scope', 'read');
    const answer = await decide(tampered.toString(), 'approve');
    expect(answer.status).toBe(401);
    expect(await answer.text()).toContain('unable to send the consumer data');
    expect(woo.authorizations().at(-1)).toMatchObject({ scope: 'read', callbackStatus: 400, keyId: null });
    expect((await secrets.allOf('read-only')).size).toBe(0);
    expect((await directory.list()).some((shop) => shop.id === 'read-only')).toBe(false);

    const page = await returnPage(`success=1&user_id=${userIdOf(url)}`);
    expect(page.outcome).toBe('failed');
    expect(page.html).toContain('Relais needs Read/Write');
  });

  it('refuses keys the store begun with does not accept, storing nothing', async () => {
    const { url } = await connect.begin({ storeUrl: woo.siteUrl(STORE), shopId: 'bad-keys' });
    const answer = await postCallback(keysBody(userIdOf(url)));
    expect(answer.status).toBe(400);
    expect(await answer.json()).toMatchObject({ error: 'keys_rejected' });
    expect((await secrets.allOf('bad-keys')).size).toBe(0);
    expect((await directory.list()).some((shop) => shop.id === 'bad-keys')).toBe(false);
  });

  it('on a denied approval stores nothing, the return page says access was denied, and a late callback is refused', async () => {
    const { url } = await connect.begin({ storeUrl: woo.siteUrl(STORE), shopId: 'denied' });
    const answer = await decide(url, 'deny');
    expect(answer.status).toBe(302);
    const back = new URL(answer.headers.get('location')!);
    expect(back.searchParams.get('success')).toBe('0');
    const page = await returnPage(back.search.slice(1));
    expect(page).toMatchObject({ status: 200, outcome: 'denied' });
    expect(page.html).toContain('Access was denied on the store');

    const issued = woo.issuedKeys(STORE).at(-1)!;
    const late = await postCallback(keysBody(userIdOf(url), issued));
    expect(late.status).toBe(400);
    expect((await secrets.allOf('denied')).size).toBe(0);
    expect((await directory.list()).some((shop) => shop.id === 'denied')).toBe(false);
  });

  it('keeps the user_id in Redis for a limited time, and shows its outcome only to the session that began it', async () => {
    const { url, userId } = await connect.begin({ storeUrl: woo.siteUrl(STORE), shopId: 'bound', binding: 'a' });
    const ttl = await redis.client().pttl(`${redis.prefix}:woo-connect:pending:${userId}`);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(10 * 60_000);
    expect(await connect.finish({ userId, success: false, binding: 'b' })).toEqual({ kind: 'other_session' });
    expect((await decide(url, 'approve')).status).toBe(302);
    expect(await connect.finish({ userId, success: true, binding: 'b' })).toEqual({ kind: 'other_session' });
    expect(await connect.finish({ userId, success: true, binding: 'a' })).toMatchObject({
      kind: 'connected',
      shopId: 'bound',
    });
    expect((await returnPage(`success=1&user_id=${hex(32)}`)).outcome).toBe('unknown');
  });

  it('keeps the keys when the store refuses to register the webhooks, and says "Check and switch on" will register them', async () => {
    woo.faults.add({ kind: 'status', status: 500, method: 'POST', route: '/wc/v3/webhooks' });
    const { url, userId } = await connect.begin({ storeUrl: woo.siteUrl(STORE), shopId: 'hooks-later' });
    expect((await decide(url, 'approve')).status).toBe(302);
    expect((await secrets.allOf('hooks-later')).size).toBe(3);
    expect(woo.webhooks(STORE).some((h) => h.deliveryUrl.endsWith('/hooks-later'))).toBe(false);
    const page = await returnPage(`success=1&user_id=${userId}`);
    expect(page.outcome).toBe('connected');
    expect(page.html).toContain('webhooks not registered yet');
    expect(page.html).toContain('Check and switch on');
  });

  it('connecting a switched-on shop again keeps its settings, its state and its webhook secret', async () => {
    const before = (await directory.list()).find((shop) => shop.id === STORE)!;
    const webhookSecret = (await secrets.get(STORE, WOO_STORED.webhookSecret))!.value.reveal();
    await directory.save({ ...before, document: { ...before.document, name: 'Abidjan Pagne' }, enabled: true });
    const { url } = await connect.begin({ storeUrl: woo.siteUrl(STORE), shopId: STORE });
    expect((await decide(url, 'approve')).status).toBe(302);
    const after = (await directory.list()).find((shop) => shop.id === STORE)!;
    expect(after).toMatchObject({ enabled: true, document: { name: 'Abidjan Pagne' } });
    expect((await secrets.get(STORE, WOO_STORED.webhookSecret))!.value.reveal()).toBe(webhookSecret);
    expect((await secrets.get(STORE, WOO_STORED.consumerKey))!.value.reveal()).toBe(
      woo.issuedKeys(STORE).at(-1)!.consumerKey,
    );
    expect(woo.webhooks(STORE).filter((h) => h.deliveryUrl.endsWith(`/${STORE}`))).toHaveLength(4);
  });

  it('refuses to connect another store under the id of a connected WooCommerce shop, and the live shop keeps its store, keys and webhook secret', async () => {
    const live = (await directory.list()).find((shop) => shop.id === STORE)!;
    await directory.save({ ...live, enabled: true });
    const keys = (await secrets.allOf(STORE)).size;
    const consumerKey = (await secrets.get(STORE, WOO_STORED.consumerKey))!.value.reveal();
    const webhookSecret = (await secrets.get(STORE, WOO_STORED.webhookSecret))!.value.reveal();

    const refused = (await connect
      .begin({ storeUrl: woo.siteUrl(OTHER_STORE), shopId: STORE })
      .catch((e: unknown) => e)) as WooConnectError;
    expect(refused).toBeInstanceOf(WooConnectError);
    expect(refused.reason).toBe('shop_id_taken');
    expect(refused.message).toContain(`shop id ${STORE} is connected to ${woo.siteUrl(STORE)}`);
    expect(refused.message).toContain('choose another shop id');

    // Begun before the first store was connected under that id (two operators at once): refused at the callback.
    const { url } = await connect.begin({ storeUrl: woo.siteUrl(OTHER_STORE), shopId: 'raced' });
    await directory.save({ ...live, id: 'raced', document: { ...live.document, id: 'raced' }, enabled: true });
    const answer = await decide(url, 'approve');
    expect(answer.status).toBe(401);
    const raced = (await directory.list()).find((shop) => shop.id === 'raced')!;
    expect((raced.document.woocommerce as Record<string, unknown>).url).toBe(woo.siteUrl(STORE));

    const after = (await directory.list()).find((shop) => shop.id === STORE)!;
    expect(after.enabled).toBe(true);
    expect((after.document.woocommerce as Record<string, unknown>).url).toBe(woo.siteUrl(STORE));
    expect((await secrets.allOf(STORE)).size).toBe(keys);
    expect((await secrets.get(STORE, WOO_STORED.consumerKey))!.value.reveal()).toBe(consumerKey);
    expect((await secrets.get(STORE, WOO_STORED.webhookSecret))!.value.reveal()).toBe(webhookSecret);
    expect(woo.webhooks(OTHER_STORE)).toHaveLength(0);
  });

  it('refuses to begin for a shop id another platform’s shop has, a store URL that is not http(s), or an http public URL off loopback', async () => {
    await directory.save({ id: 'taken', platform: 'shopify', document: { id: 'taken' }, enabled: false });
    const reason = async (promise: Promise<unknown>) =>
      ((await promise.catch((e: unknown) => e)) as WooConnectError).reason;
    expect(await reason(connect.begin({ storeUrl: woo.siteUrl(STORE), shopId: 'taken' }))).toBe('shop_id_taken');
    expect(await reason(connect.begin({ storeUrl: 'ftp://store.example', shopId: 'x' }))).toBe('invalid_store_url');
    expect(
      () =>
        new WooConnect({
          publicUrl: 'http://relais.example.com',
          states: new RedisConnectStates(redis.client(), redis.prefix),
          secrets,
          directory,
          logger: createLogger({ level: 'silent' }),
        }),
    ).toThrow(/must be https/);
  });
});
