/** Connected shops in PostgreSQL (the port: src/shops/shop-directory.ts): one row per shop, its registry entry as jsonb. */
import type pg from 'pg';
import type { ConnectedShop, ShopDirectory } from '../../shops/shop-directory.js';

export class PostgresShopDirectory implements ShopDirectory {
  constructor(private readonly pool: pg.Pool) {}

  async list(): Promise<ConnectedShop[]> {
    const { rows } = await this.pool.query<ConnectedShop>(
      'SELECT id, platform, document, enabled FROM shops ORDER BY id',
    );
    return rows;
  }

  async save(shop: {
    id: string;
    platform: string;
    document: Record<string, unknown>;
    enabled?: boolean;
  }): Promise<void> {
    await this.pool.query(
      `INSERT INTO shops (id, platform, document, enabled) VALUES ($1, $2, $3::jsonb, $4)
       ON CONFLICT (id) DO UPDATE SET platform = EXCLUDED.platform, document = EXCLUDED.document, enabled = EXCLUDED.enabled, updated_at = now()`,
      [shop.id, shop.platform, JSON.stringify(shop.document), shop.enabled ?? true],
    );
  }

  async setEnabled(id: string, enabled: boolean): Promise<boolean> {
    const result = await this.pool.query('UPDATE shops SET enabled = $2, updated_at = now() WHERE id = $1', [
      id,
      enabled,
    ]);
    return result.rowCount === 1;
  }

  async remove(id: string): Promise<boolean> {
    const result = await this.pool.query('DELETE FROM shops WHERE id = $1', [id]);
    return result.rowCount === 1;
  }
}
