/** What a delivery service showed of its dialect, and the shops' stored wire profiles (src/ledger/first-contact.ts), in PostgreSQL. */
import type pg from 'pg';
import type { DeliveryStep } from '../../domain/shipment-status.js';
import {
  SAMPLE_DAYS,
  SAMPLES_PER_SHOP,
  type FirstContactStore,
  type SampleRefusal,
  type SeenState,
  type ShopProfileStore,
  type SightingSource,
  type StateSighting,
  type StoredProfile,
  type WebhookSample,
} from '../../ledger/first-contact.js';

interface SampleRow {
  shop_id: string;
  received_at: Date;
  refusal: SampleRefusal;
  body: Buffer;
  header_names: string[];
  signature_candidates: Record<string, string>;
}

interface StateRow {
  state: string;
  first_seen_at: Date;
  source: SightingSource;
  step: DeliveryStep | null;
  after_state: string | null;
  after_step: DeliveryStep | null;
}

export class PostgresFirstContact implements FirstContactStore {
  constructor(private readonly pool: pg.Pool) {}

  async keepWebhookSample(sample: WebhookSample): Promise<void> {
    await this.pool.query(
      `INSERT INTO delivery_webhook_samples (shop_id, received_at, refusal, body, header_names, signature_candidates)
       VALUES ($1, $2, $3, $4, $5, $6::jsonb)`,
      [
        sample.shopId,
        sample.receivedAt,
        sample.refusal,
        sample.body,
        sample.headerNames,
        JSON.stringify(sample.signatureCandidates),
      ],
    );
    // The bound: the newest SAMPLES_PER_SHOP of the shop, none older than SAMPLE_DAYS.
    await this.pool.query(
      `DELETE FROM delivery_webhook_samples WHERE shop_id = $1 AND (
         received_at < $2::timestamptz - make_interval(days => $3)
         OR id NOT IN (SELECT id FROM delivery_webhook_samples WHERE shop_id = $1 ORDER BY received_at DESC, id DESC LIMIT $4))`,
      [sample.shopId, sample.receivedAt, SAMPLE_DAYS, SAMPLES_PER_SHOP],
    );
  }

  async webhookSamples(shopId: string, now: Date): Promise<WebhookSample[]> {
    const { rows } = await this.pool.query<SampleRow>(
      `SELECT shop_id, received_at, refusal, body, header_names, signature_candidates FROM delivery_webhook_samples
       WHERE shop_id = $1 AND received_at >= $2::timestamptz - make_interval(days => $3)
       ORDER BY received_at DESC, id DESC LIMIT $4`,
      [shopId, now, SAMPLE_DAYS, SAMPLES_PER_SHOP],
    );
    return rows.map((row) => ({
      shopId: row.shop_id,
      receivedAt: row.received_at,
      refusal: row.refusal,
      body: row.body,
      headerNames: row.header_names,
      signatureCandidates: row.signature_candidates,
    }));
  }

  async noteStates(shopId: string, sightings: StateSighting[], at: Date): Promise<void> {
    if (sightings.length === 0) return;
    await this.pool.query(
      `INSERT INTO service_states_seen (shop_id, state, first_seen_at, source, step, after_state, after_step)
       SELECT $1, * FROM unnest($2::text[], $3::timestamptz[], $4::text[], $5::text[], $6::text[], $7::text[])
       ON CONFLICT (shop_id, state) DO UPDATE SET source = EXCLUDED.source, after_state = EXCLUDED.after_state,
         after_step = EXCLUDED.after_step
       WHERE service_states_seen.after_state IS NULL AND EXCLUDED.after_state IS NOT NULL`,
      [
        shopId,
        sightings.map((s) => s.state),
        sightings.map(() => at),
        sightings.map((s) => s.source),
        sightings.map((s) => s.step ?? null),
        sightings.map((s) => s.after ?? null),
        sightings.map((s) => s.afterStep ?? null),
      ],
    );
  }

  async seenStates(shopId: string): Promise<SeenState[]> {
    const { rows } = await this.pool.query<StateRow>(
      `SELECT state, first_seen_at, source, step, after_state, after_step FROM service_states_seen
       WHERE shop_id = $1 ORDER BY first_seen_at, state`,
      [shopId],
    );
    return rows.map((row) => ({
      state: row.state,
      firstSeenAt: row.first_seen_at,
      source: row.source,
      ...(row.step ? { step: row.step } : {}),
      ...(row.after_state ? { after: row.after_state } : {}),
      ...(row.after_step ? { afterStep: row.after_step } : {}),
    }));
  }
}

export class PostgresShopProfiles implements ShopProfileStore {
  constructor(private readonly pool: pg.Pool) {}

  async save(shopId: string, document: unknown, source: string): Promise<number> {
    // The next version; of two saves at once, the second fails on the primary key rather than overwrite the first.
    const { rows } = await this.pool.query<{ version: number }>(
      `INSERT INTO shop_wire_profiles (shop_id, version, document, source)
       SELECT $1, COALESCE(MAX(version), 0) + 1, $2::jsonb, $3 FROM shop_wire_profiles WHERE shop_id = $1
       RETURNING version`,
      [shopId, JSON.stringify(document), source],
    );
    return rows[0]!.version;
  }

  async latest(): Promise<StoredProfile[]> {
    const { rows } = await this.pool.query<{
      shop_id: string;
      version: number;
      document: unknown;
      source: string;
      stored_at: Date;
    }>(
      `SELECT DISTINCT ON (shop_id) shop_id, version, document, source, stored_at FROM shop_wire_profiles
       ORDER BY shop_id, version DESC`,
    );
    return rows.map((row) => ({
      shopId: row.shop_id,
      version: row.version,
      document: row.document,
      source: row.source,
      storedAt: row.stored_at,
    }));
  }
}
