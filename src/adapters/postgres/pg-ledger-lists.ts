/**
 * The PostgreSQL ledger's statements across orders (the port: src/ledger/order-ledger.ts): the lists the
 * watchdog, the polling fallback, the held page and reconciliation read; the claims seen on shipments; and the
 * erasure of personal data (retention, customers/redact, shop/redact). PostgresOrderLedger (pg-ledger.ts) adds
 * the statements about one order to these. Closing a stale order is here too, beside the list it comes from.
 */
import type pg from 'pg';
import { SHOP_ID_PATTERN } from '../../domain/ids.js';
import { FINAL_STATES } from '../../domain/order-state.js';
import type {
  CloseStaleResult,
  KnownClaim,
  OrderRecord,
  StaleOrder,
  TimelineEntry,
} from '../../ledger/order-ledger.js';
import { inTransaction } from './database.js';
import { FINAL, RECORD_COLUMNS, TIMELINE_FROM_JSON, toRecord, type OrderRow } from './pg-order-rows.js';

export abstract class PostgresLedgerLists {
  constructor(protected readonly pool: pg.Pool) {}

  abstract get(externalOrderId: string): Promise<OrderRecord | undefined>;

  async listUnready(createdBefore: Date, limit = 1000): Promise<Array<{ externalOrderId: string; since: Date }>> {
    const { rows } = await this.pool.query<{ external_order_id: string; unready_since: Date }>(
      'SELECT external_order_id, unready_since FROM orders WHERE unready_since <= $1 ORDER BY unready_since, external_order_id LIMIT $2',
      [createdBefore, limit],
    );
    return rows.map((row) => ({ externalOrderId: row.external_order_id, since: row.unready_since }));
  }

  async countUnready(createdBefore: Date): Promise<number> {
    const { rows } = await this.pool.query<{ count: string }>('SELECT count(*) FROM orders WHERE unready_since <= $1', [
      createdBefore,
    ]);
    return Number(rows[0]?.count ?? 0);
  }

  async listInFlight(limit: number): Promise<Array<{ externalOrderId: string; shopId: string; shipmentId: string }>> {
    const { rows } = await this.pool.query<{ external_order_id: string; shop_id: string; shipment_id: string }>(
      `SELECT external_order_id, shop_id, shipment->>'shipmentId' AS shipment_id FROM orders
       WHERE in_flight_since IS NOT NULL ORDER BY in_flight_since, external_order_id LIMIT $1`,
      [limit],
    );
    return rows.map((row) => ({
      externalOrderId: row.external_order_id,
      shopId: row.shop_id,
      shipmentId: row.shipment_id,
    }));
  }

  async listHeld(limit = 500): Promise<OrderRecord[]> {
    const { rows } = await this.pool.query<OrderRow>(
      `SELECT ${RECORD_COLUMNS} FROM orders WHERE state = 'held' ORDER BY held_at DESC, external_order_id DESC LIMIT $1`,
      [limit],
    );
    return rows.map(toRecord);
  }

  async listHeldPage(options: { shopId?: string; after?: string; limit: number }): Promise<OrderRecord[]> {
    const { rows } = await this.pool.query<OrderRow>(
      `SELECT ${RECORD_COLUMNS} FROM orders
       WHERE state = 'held' AND ($1::text IS NULL OR shop_id = $1) AND ($2::text IS NULL OR external_order_id > $2)
       ORDER BY external_order_id LIMIT $3`,
      [options.shopId ?? null, options.after ?? null, options.limit],
    );
    return rows.map(toRecord);
  }

  async listShopOrders(shopId: string, options: { since?: Date; limit?: number } = {}): Promise<string[]> {
    const { rows } = await this.pool.query<{ external_order_id: string }>(
      `SELECT external_order_id FROM orders WHERE shop_id = $1 AND ($2::timestamptz IS NULL OR first_seen_at >= $2)
       ORDER BY first_seen_at, external_order_id LIMIT $3`,
      [shopId, options.since ?? null, options.limit ?? 10_000],
    );
    return rows.map((row) => row.external_order_id);
  }

  async ordersWithClaims(externalOrderIds: readonly string[]): Promise<Set<string>> {
    if (externalOrderIds.length === 0) return new Set();
    const { rows } = await this.pool.query<{ external_order_id: string }>(
      'SELECT DISTINCT external_order_id FROM order_claims WHERE external_order_id = ANY($1::text[])',
      [externalOrderIds],
    );
    return new Set(rows.map((row) => row.external_order_id));
  }

  async knownClaims<T>(externalOrderId: string): Promise<Array<KnownClaim<T>>> {
    const { rows } = await this.pool.query<{ claim_key: string; claim: T; decided: boolean }>(
      'SELECT claim_key, claim, decided FROM order_claims WHERE external_order_id = $1 ORDER BY seen_at, claim_key',
      [externalOrderId],
    );
    return rows.map((row) => ({ key: row.claim_key, claim: row.claim, decided: row.decided }));
  }

  /**
   * The claim is kept as last seen; its decision is then recorded by a conditional update that only one save can
   * make (the row lock orders concurrent ones), so the decision is reported newly decided exactly once.
   */
  async saveClaim<T>(externalOrderId: string, claim: KnownClaim<T>, now: Date): Promise<{ newlyDecided: boolean }> {
    await this.pool.query(
      `INSERT INTO order_claims (external_order_id, claim_key, shop_id, claim, decided, seen_at)
       VALUES ($1, $2, split_part($1, ':', 1), $3::jsonb, false, $4)
       ON CONFLICT (external_order_id, claim_key) DO UPDATE SET claim = EXCLUDED.claim`,
      [externalOrderId, claim.key, JSON.stringify(claim.claim), now],
    );
    if (!claim.decided) return { newlyDecided: false };
    const decided = await this.pool.query(
      'UPDATE order_claims SET decided = true WHERE external_order_id = $1 AND claim_key = $2 AND NOT decided',
      [externalOrderId, claim.key],
    );
    return { newlyDecided: decided.rowCount === 1 };
  }

  async redactOrders(externalOrderIds: string[]): Promise<number> {
    if (externalOrderIds.length === 0) return 0;
    const result = await this.pool.query(
      `UPDATE orders SET payload = NULL, store_order = NULL, personal_data_erased_at = coalesce(personal_data_erased_at, now())
       WHERE external_order_id = ANY($1::text[]) AND (payload IS NOT NULL OR store_order IS NOT NULL)`,
      [externalOrderIds],
    );
    return result.rowCount ?? 0;
  }

  async erasePersonalDataOfFinished(finishedBefore: Date): Promise<number> {
    const result = await this.pool.query(
      `UPDATE orders SET payload = NULL, store_order = NULL, personal_data_erased_at = now()
       WHERE finished_at IS NOT NULL AND finished_at < $1 AND personal_data_erased_at IS NULL`,
      [finishedBefore],
    );
    return result.rowCount ?? 0;
  }

  async eraseShop(shopId: string): Promise<number> {
    if (!SHOP_ID_PATTERN.test(shopId)) throw new Error(`invalid shop id "${shopId}"`);
    return inTransaction(this.pool, async (client) => {
      await client.query('DELETE FROM order_timeline WHERE shop_id = $1', [shopId]);
      await client.query('DELETE FROM order_claims WHERE shop_id = $1', [shopId]);
      await client.query('DELETE FROM order_holds WHERE shop_id = $1', [shopId]);
      const erased = await client.query('DELETE FROM orders WHERE shop_id = $1', [shopId]);
      return erased.rowCount ?? 0;
    });
  }

  async listStale(firstSeenBefore: Date, options: { shopId?: string } = {}): Promise<StaleOrder[]> {
    const { rows } = await this.pool.query<OrderRow>(
      `SELECT ${RECORD_COLUMNS} FROM orders
       WHERE finished_at IS NULL AND first_seen_at < $1 AND NOT (state = ANY($2::text[])) AND ($3::text IS NULL OR shop_id = $3)
       ORDER BY first_seen_at, external_order_id`,
      [firstSeenBefore, FINAL, options.shopId ?? null],
    );
    return rows.map((row) => ({
      externalOrderId: row.external_order_id,
      shopId: row.shop_id,
      orderName: row.order_name,
      state: row.state,
      firstSeenAt: row.first_seen_at.toISOString(),
      stateChangedAt: row.state_changed_at.toISOString(),
      ...(row.hold ? { holdCode: row.hold.code } : {}),
    }));
  }

  async closeStale(
    externalOrderId: string,
    input: { reason: string; by: string; now: Date; firstSeenBefore: Date },
  ): Promise<CloseStaleResult> {
    const record = await this.get(externalOrderId);
    if (!record) return { ok: false, why: 'unknown_order', detail: `no order ${externalOrderId} in the ledger` };
    if (FINAL_STATES.has(record.state))
      return { ok: false, why: 'already_final', detail: `order ${externalOrderId} is already ${record.state}` };
    if (!(Date.parse(record.meta.firstSeenAt) < input.firstSeenBefore.getTime())) {
      return {
        ok: false,
        why: 'not_stale',
        detail: `order ${externalOrderId} was first seen ${record.meta.firstSeenAt}, after ${input.firstSeenBefore.toISOString()}`,
      };
    }
    // The move and its timeline entry in one transaction: the state is only moved if it is still the one read.
    const closed = await inTransaction(this.pool, async (client) => {
      const moved = await client.query(
        `UPDATE orders SET state = 'cancelled', state_changed_at = $2, hold = NULL, held_at = NULL, payload = NULL,
           in_flight_since = NULL, unready_since = NULL, finished_at = $2
         WHERE external_order_id = $1 AND state = $3`,
        [externalOrderId, input.now, record.state],
      );
      if (moved.rowCount !== 1) return false;
      const entry: TimelineEntry = {
        at: input.now.toISOString(),
        system: 'relais',
        operation: 'close',
        outcome: 'closed_by_operator',
        detail: `closed by ${input.by} from state ${record.state} (no final state since ${record.meta.firstSeenAt}): ${input.reason}. Nothing was sent to the delivery service or the shop.`,
      };
      await client.query(TIMELINE_FROM_JSON, [externalOrderId, JSON.stringify(entry)]);
      return true;
    });
    if (!closed) return { ok: false, why: 'already_final', detail: `order ${externalOrderId} changed state meanwhile` };
    return { ok: true, previousState: record.state };
  }
}
