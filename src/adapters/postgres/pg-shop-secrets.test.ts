/**
 * Connected shops' secrets at rest, in a real PostgreSQL: sealed with AES-256-GCM so the table never holds the
 * value, bound to their row, re-sealed under a new key by rotation, replaced only by the refresher that read
 * the current one, and erased with the shop.
 */
import { randomBytes } from 'node:crypto';
import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { perFile } from '../../../test/support/per-file.js';
import { startTestDatabase } from '../../../test/support/postgres.js';
import { SecretBox, SecretBoxError } from '../../shops/secret-box.js';
import { PostgresShopSecretStore } from './pg-shop-secrets.js';

const db = perFile(() => startTestDatabase());

const key = () => randomBytes(32);
// Generated per run: no credential-shaped string is committed.
const TOKEN = `shpat_test_${randomBytes(16).toString('hex')}`;

describe('shop secrets at rest', () => {
  it('stores a token sealed (its bytes appear nowhere in the row) and gives it back, with its expiry, as a Secret that prints nothing', async () => {
    const store = new PostgresShopSecretStore(db().pool(), new SecretBox([{ id: 'k1', key: key() }]));
    const expiresAt = new Date('2026-11-26T06:00:00Z');
    await store.put('dakar-mode', 'shopify.accessToken', TOKEN, { expiresAt });
    const { rows } = await db()
      .pool()
      .query<{ sealed: Buffer; key_id: string }>(
        "SELECT sealed, key_id FROM shop_secrets WHERE shop_id = 'dakar-mode'",
      );
    expect(rows).toHaveLength(1);
    expect(rows[0]!.key_id).toBe('k1');
    expect(rows[0]!.sealed.includes(Buffer.from('0123456789abcdef'))).toBe(false);
    const stored = await store.get('dakar-mode', 'shopify.accessToken');
    expect(stored?.value.reveal()).toBe(TOKEN);
    expect(stored?.expiresAt?.toISOString()).toBe(expiresAt.toISOString());
    expect(`${JSON.stringify(stored)} ${String(stored?.value)} ${inspect(stored)}`).not.toContain(TOKEN);
  });

  it("refuses a sealed value copied into another shop's row, and one whose bytes were altered", async () => {
    const store = new PostgresShopSecretStore(db().pool(), new SecretBox([{ id: 'k1', key: key() }]));
    await store.put('moved-from', 'dispatch.apiKey', 'pk_live_secret_one');
    await store.put('moved-to', 'dispatch.apiKey', 'pk_live_secret_two');
    await db()
      .pool()
      .query(
        "UPDATE shop_secrets SET sealed = (SELECT sealed FROM shop_secrets WHERE shop_id = 'moved-from') WHERE shop_id = 'moved-to'",
      );
    await expect(store.get('moved-to', 'dispatch.apiKey')).rejects.toThrow(SecretBoxError);
    await db()
      .pool()
      .query(
        "UPDATE shop_secrets SET sealed = overlay(sealed placing '\\x00'::bytea from 20 for 1) WHERE shop_id = 'moved-from'",
      );
    await expect(store.get('moved-from', 'dispatch.apiKey')).rejects.toThrow(/does not decrypt/);
  });

  it('rotates keys: with the new key first and the old one kept, old values still open, reseal moves them all to the new key, and then the old key can go', async () => {
    // A schema of its own: every row of the table must open under the listed keys.
    const own = await startTestDatabase();
    const pool = own.pool();
    const oldKey = { id: 'old', key: key() };
    const newKey = { id: 'new', key: key() };
    const before = new PostgresShopSecretStore(pool, new SecretBox([oldKey]));
    await before.put('rotating', 'woocommerce.consumerSecret', 'cs_before_rotation');
    await before.put('rotating', 'woocommerce.webhookSecret', 'whsec_before_rotation');

    const during = new PostgresShopSecretStore(pool, new SecretBox([newKey, oldKey]));
    expect((await during.get('rotating', 'woocommerce.consumerSecret'))?.value.reveal()).toBe('cs_before_rotation');
    expect(await during.reseal()).toBe(2);
    expect(await during.reseal()).toBe(0);

    const after = new PostgresShopSecretStore(pool, new SecretBox([newKey]));
    expect((await after.get('rotating', 'woocommerce.webhookSecret'))?.value.reveal()).toBe('whsec_before_rotation');
    const withoutNew = new PostgresShopSecretStore(pool, new SecretBox([oldKey]));
    await expect(withoutNew.get('rotating', 'woocommerce.webhookSecret')).rejects.toThrow(/no longer lists/);
    await own.stop();
  });

  it('lets only one of two refreshers that read the same token replace it, and erases every secret of an uninstalled shop', async () => {
    const box = new SecretBox([{ id: 'k1', key: key() }]);
    const first = new PostgresShopSecretStore(db().pool(), box);
    const second = new PostgresShopSecretStore(db().pool(), box);
    await first.put('refreshing', 'shopify.refreshToken', 'shprt_1');
    const results = await Promise.all([
      first.replaceIf('refreshing', 'shopify.refreshToken', 'shprt_1', 'shprt_2a'),
      second.replaceIf('refreshing', 'shopify.refreshToken', 'shprt_1', 'shprt_2b'),
    ]);
    expect(results.filter(Boolean)).toHaveLength(1);
    expect(['shprt_2a', 'shprt_2b']).toContain((await first.get('refreshing', 'shopify.refreshToken'))?.value.reveal());

    await first.put('refreshing', 'shopify.accessToken', 'shpat_x');
    await first.put('other-shop', 'shopify.accessToken', 'shpat_y');
    expect(await first.deleteShop('refreshing')).toBe(2);
    expect(await first.get('refreshing', 'shopify.accessToken')).toBeUndefined();
    expect((await first.get('other-shop', 'shopify.accessToken'))?.value.reveal()).toBe('shpat_y');
  });

  it('lets only one of many callers create a secret that does not exist yet (replaceIf with nothing expected)', async () => {
    const box = new SecretBox([{ id: 'k1', key: key() }]);
    const stores = Array.from({ length: 8 }, () => new PostgresShopSecretStore(db().pool(), box));
    const results = await Promise.all(
      stores.map((store, i) => store.replaceIf('first-claim', 'shopify.refreshLease', undefined, `holder-${i}`)),
    );
    expect(results.filter(Boolean)).toHaveLength(1);
    expect((await stores[0]!.get('first-claim', 'shopify.refreshLease'))?.value.reveal()).toBe(
      `holder-${results.indexOf(true)}`,
    );
  });

  it('reads RELAIS_SECRET_KEYS as id:base64 pairs, the first current, and refuses a short key or a malformed setting', () => {
    const k1 = key().toString('base64');
    const k2 = key().toString('base64');
    expect(SecretBox.fromSetting(`2026b:${k2}, 2026a:${k1}`).currentKeyId).toBe('2026b');
    expect(() => SecretBox.fromSetting(`short:${randomBytes(16).toString('base64')}`)).toThrow(/needs 32/);
    expect(() => SecretBox.fromSetting(k1)).toThrow(/id:base64key/);
    expect(() => SecretBox.fromSetting('')).toThrow(/RELAIS_SECRET_KEYS/);
  });
});
