/**
 * The service's map: which names a delivery service prices, learned from its own answers (quotes create
 * nothing), kept per service so every shop of one organisation shares it. The port; the PostgreSQL adapter is
 * src/adapters/postgres/pg-service-map.ts (durable knowledge about a service, not a cache), and
 * src/ledger/service-map-cache.ts keeps a copy in Redis for the dispatch path.
 */

/** One service: its base URL and a non-secret digest of its organisation's key (tariff-guard.ts serviceId). */
export interface ServiceRef {
  id: string;
  baseUrl: string;
}

/** What a quote showed of one name. */
export interface NamePrice {
  /** The text sent in `city`, as sent. */
  name: string;
  /** True: priced below the fallback tariff; false: at the fallback (the service does not know the name). */
  priced: boolean;
  /** The quote's total, in francs, and what it priced (pickup, weight band, payment mode): prices vary with them. */
  totalXof: number;
  quotedFor: string;
  learnedAt: Date;
}

export interface ServiceMapStore {
  /** Records what quotes showed (the newest answer for a name replaces the older one). */
  record(service: ServiceRef, prices: NamePrice[]): Promise<void>;
  /** What is known of these names at this service (names never quoted are absent). */
  lookup(serviceId: string, names: string[]): Promise<Map<string, NamePrice>>;
  /** Everything known of a service, by name. */
  all(serviceId: string): Promise<NamePrice[]>;
}
