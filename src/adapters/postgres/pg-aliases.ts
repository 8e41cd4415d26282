/** The alias store (src/ledger/alias-store.ts) in PostgreSQL: one row per shop and alias text. */
import type pg from 'pg';
import type { AliasStore } from '../../ledger/alias-store.js';

export class PostgresAliasStore implements AliasStore {
  constructor(private readonly pool: pg.Pool) {}

  async add(shopId: string, text: string, neighbourhood: string): Promise<void> {
    await this.pool.query(
      `INSERT INTO shop_aliases (shop_id, alias, neighbourhood) VALUES ($1, $2, $3)
       ON CONFLICT (shop_id, alias) DO UPDATE SET neighbourhood = EXCLUDED.neighbourhood`,
      [shopId, text.trim(), neighbourhood.trim()],
    );
  }

  async remove(shopId: string, text: string): Promise<boolean> {
    const result = await this.pool.query('DELETE FROM shop_aliases WHERE shop_id = $1 AND alias = $2', [
      shopId,
      text.trim(),
    ]);
    return (result.rowCount ?? 0) > 0;
  }

  async list(shopId: string): Promise<Record<string, string>> {
    const { rows } = await this.pool.query<{ alias: string; neighbourhood: string }>(
      'SELECT alias, neighbourhood FROM shop_aliases WHERE shop_id = $1 ORDER BY alias',
      [shopId],
    );
    return Object.fromEntries(rows.map((row) => [row.alias, row.neighbourhood]));
  }

  async forShop(shop: {
    id: string;
    policy: { neighbourhoodAliases: Record<string, string> };
  }): Promise<Record<string, string>> {
    return { ...shop.policy.neighbourhoodAliases, ...(await this.list(shop.id)) };
  }
}
