/** The service map (src/ledger/service-map.ts) in PostgreSQL: one row per service and name. */
import type pg from 'pg';
import type { NamePrice, ServiceMapStore, ServiceRef } from '../../ledger/service-map.js';

interface Row {
  name: string;
  priced: boolean;
  total_xof: number;
  quoted_for: string;
  learned_at: Date;
}

const toPrice = (row: Row): NamePrice => ({
  name: row.name,
  priced: row.priced,
  totalXof: row.total_xof,
  quotedFor: row.quoted_for,
  learnedAt: row.learned_at,
});

export class PostgresServiceMap implements ServiceMapStore {
  constructor(private readonly pool: pg.Pool) {}

  async record(service: ServiceRef, prices: NamePrice[]): Promise<void> {
    if (prices.length === 0) return;
    // One statement for all names; an older answer never replaces a newer one.
    await this.pool.query(
      `INSERT INTO service_map (service_id, base_url, name, priced, total_xof, quoted_for, learned_at)
       SELECT $1, $2, * FROM unnest($3::text[], $4::boolean[], $5::integer[], $6::text[], $7::timestamptz[])
       ON CONFLICT (service_id, name) DO UPDATE SET
         base_url = EXCLUDED.base_url, priced = EXCLUDED.priced, total_xof = EXCLUDED.total_xof,
         quoted_for = EXCLUDED.quoted_for, learned_at = EXCLUDED.learned_at
       WHERE service_map.learned_at <= EXCLUDED.learned_at`,
      [
        service.id,
        service.baseUrl,
        prices.map((p) => p.name),
        prices.map((p) => p.priced),
        prices.map((p) => p.totalXof),
        prices.map((p) => p.quotedFor),
        prices.map((p) => p.learnedAt.toISOString()),
      ],
    );
  }

  async lookup(serviceId: string, names: string[]): Promise<Map<string, NamePrice>> {
    const { rows } = await this.pool.query<Row>(
      `SELECT name, priced, total_xof, quoted_for, learned_at FROM service_map
       WHERE service_id = $1 AND name = ANY($2::text[])`,
      [serviceId, names],
    );
    return new Map(rows.map((row) => [row.name, toPrice(row)]));
  }

  async all(serviceId: string): Promise<NamePrice[]> {
    const { rows } = await this.pool.query<Row>(
      `SELECT name, priced, total_xof, quoted_for, learned_at FROM service_map WHERE service_id = $1 ORDER BY name`,
      [serviceId],
    );
    return rows.map(toPrice);
  }
}
