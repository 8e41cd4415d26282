/**
 * Connected shops' secrets in PostgreSQL (the port: src/shops/shop-secrets.ts), sealed with the SecretBox:
 * nothing readable is ever written to the table, and a row's ciphertext only opens for its own shop and name.
 */
import type pg from 'pg';
import { Secret } from '../../shops/secret.js';
import type { SecretBox } from '../../shops/secret-box.js';
import type { ShopSecretStore, StoredSecret } from '../../shops/shop-secrets.js';
import { withClient } from './database.js';

interface SecretRow {
  shop_id: string;
  name: string;
  key_id: string;
  sealed: Buffer;
  expires_at: Date | null;
  updated_at: Date;
}

/** The associated data binding a ciphertext to its row. */
const contextOf = (shopId: string, name: string): string => `relais shop secret\u0000${shopId}\u0000${name}`;

export class PostgresShopSecretStore implements ShopSecretStore {
  constructor(
    private readonly pool: pg.Pool,
    private readonly box: SecretBox,
  ) {}

  async get(shopId: string, name: string): Promise<StoredSecret | undefined> {
    const { rows } = await this.pool.query<SecretRow>('SELECT * FROM shop_secrets WHERE shop_id = $1 AND name = $2', [
      shopId,
      name,
    ]);
    return rows[0] && this.stored(rows[0]);
  }

  async allOf(shopId: string): Promise<Map<string, StoredSecret>> {
    const { rows } = await this.pool.query<SecretRow>('SELECT * FROM shop_secrets WHERE shop_id = $1', [shopId]);
    return new Map(rows.map((row) => [row.name, this.stored(row)]));
  }

  private stored(row: SecretRow): StoredSecret {
    const value = new Secret(
      this.box.open({ keyId: row.key_id, sealed: row.sealed }, contextOf(row.shop_id, row.name)),
      `database ${row.shop_id}/${row.name}`,
    );
    return { value, updatedAt: row.updated_at, ...(row.expires_at ? { expiresAt: row.expires_at } : {}) };
  }

  async put(shopId: string, name: string, value: string, options: { expiresAt?: Date } = {}): Promise<void> {
    const sealed = this.box.seal(value, contextOf(shopId, name));
    await this.pool.query(
      `INSERT INTO shop_secrets (shop_id, name, key_id, sealed, expires_at, updated_at) VALUES ($1, $2, $3, $4, $5, now())
       ON CONFLICT (shop_id, name) DO UPDATE SET key_id = EXCLUDED.key_id, sealed = EXCLUDED.sealed, expires_at = EXCLUDED.expires_at, updated_at = now()`,
      [shopId, name, sealed.keyId, sealed.sealed, options.expiresAt ?? null],
    );
  }

  /**
   * Compare-and-set in one transaction: the row is locked, opened, compared, then replaced. "Only if there is none"
   * (expected undefined) is one INSERT … ON CONFLICT DO NOTHING: with no row there is nothing to lock, and two
   * callers that both saw none would otherwise both succeed.
   */
  async replaceIf(
    shopId: string,
    name: string,
    expected: string | undefined,
    value: string,
    options: { expiresAt?: Date } = {},
  ): Promise<boolean> {
    if (expected === undefined) {
      const sealed = this.box.seal(value, contextOf(shopId, name));
      const inserted = await this.pool.query(
        `INSERT INTO shop_secrets (shop_id, name, key_id, sealed, expires_at, updated_at) VALUES ($1, $2, $3, $4, $5, now()) ON CONFLICT (shop_id, name) DO NOTHING`,
        [shopId, name, sealed.keyId, sealed.sealed, options.expiresAt ?? null],
      );
      return inserted.rowCount === 1;
    }
    return withClient(this.pool, async (client) => {
      try {
        await client.query('BEGIN');
        const { rows } = await client.query<SecretRow>(
          'SELECT * FROM shop_secrets WHERE shop_id = $1 AND name = $2 FOR UPDATE',
          [shopId, name],
        );
        const current = rows[0]
          ? this.box.open({ keyId: rows[0].key_id, sealed: rows[0].sealed }, contextOf(shopId, name))
          : undefined;
        if (current !== expected) {
          await client.query('ROLLBACK');
          return false;
        }
        const sealed = this.box.seal(value, contextOf(shopId, name));
        await client.query(
          `INSERT INTO shop_secrets (shop_id, name, key_id, sealed, expires_at, updated_at) VALUES ($1, $2, $3, $4, $5, now())
         ON CONFLICT (shop_id, name) DO UPDATE SET key_id = EXCLUDED.key_id, sealed = EXCLUDED.sealed, expires_at = EXCLUDED.expires_at, updated_at = now()`,
          [shopId, name, sealed.keyId, sealed.sealed, options.expiresAt ?? null],
        );
        await client.query('COMMIT');
        return true;
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw error;
      }
    });
  }

  async deleteShop(shopId: string): Promise<number> {
    const result = await this.pool.query('DELETE FROM shop_secrets WHERE shop_id = $1', [shopId]);
    return result.rowCount ?? 0;
  }

  async deleteAllBut(shopId: string, keep: readonly string[]): Promise<number> {
    const result = await this.pool.query(
      'DELETE FROM shop_secrets WHERE shop_id = $1 AND NOT (name = ANY($2::text[]))',
      [shopId, keep],
    );
    return result.rowCount ?? 0;
  }

  async reseal(): Promise<number> {
    const { rows } = await this.pool.query<SecretRow>('SELECT * FROM shop_secrets WHERE key_id <> $1', [
      this.box.currentKeyId,
    ]);
    let resealed = 0;
    for (const row of rows) {
      const context = contextOf(row.shop_id, row.name);
      const sealed = this.box.seal(this.box.open({ keyId: row.key_id, sealed: row.sealed }, context), context);
      // Only if nobody replaced it meanwhile (the old ciphertext is still there).
      const updated = await this.pool.query(
        'UPDATE shop_secrets SET key_id = $3, sealed = $4 WHERE shop_id = $1 AND name = $2 AND sealed = $5',
        [row.shop_id, row.name, sealed.keyId, sealed.sealed, row.sealed],
      );
      resealed += updated.rowCount ?? 0;
    }
    return resealed;
  }
}
