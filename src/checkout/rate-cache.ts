/**
 * Checkout prices kept in Redis per (price source, pickup neighbourhood, destination neighbourhood, weight
 * band, with or without the collection fee), and one in-process flight per key so a burst of identical misses makes one simulatePrice call.
 *
 * The price source is the delivery service's public tracking host: two shops priced by the same service
 * from the same pickup neighbourhood share their prices (simulatePrice is public and knows no shop).
 * Only live prices are stored; a fallback or an error is never cached, so a recovered service is asked again
 * at once. Values are plain integers (XOF francs): a value that is not one reads as a miss.
 */
import { createHash } from 'node:crypto';
import type { RedisClient } from '../redis.js';
import { xof, type Xof } from '../domain/money.js';

export interface RateKeyParts {
  /** Where prices come from (the dispatch tracking URL). */
  source: string;
  pickup: string;
  /** The resolved destination: country, city and neighbourhood name as the gazetteer spells them. */
  dropoff: { country: string; city: string; name: string };
  band: string;
  /** Whether the price includes the cash-collection fee (checkout-rates.ts): the two are different prices. */
  payment: 'cod' | 'prepaid';
}

const WHOLE_FRANCS = /^\d{1,15}$/;

export class RateCache {
  /** Hashes of the few price sources (one per dispatch host), computed once. */
  readonly #sources = new Map<string, string>();

  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
  ) {}

  key(parts: RateKeyParts): string {
    let source = this.#sources.get(parts.source);
    if (source === undefined) {
      source = createHash('sha256').update(parts.source).digest('hex').slice(0, 12);
      this.#sources.set(parts.source, source);
    }
    const part = (text: string) => encodeURIComponent(text.normalize('NFC').trim().toLowerCase());
    const dropoff = `${parts.dropoff.country}/${part(parts.dropoff.city)}/${part(parts.dropoff.name)}`;
    // v2: the value is the door price (fee included for 'cod'); a v1 value (simulated price only) is never read.
    return `${this.prefix}:checkout-rate:v2:${source}:${part(parts.pickup)}:${dropoff}:${parts.band}:${parts.payment}`;
  }

  async get(key: string): Promise<Xof | undefined> {
    const value = await this.redis.get(key);
    return value !== null && WHOLE_FRANCS.test(value) ? xof(Number(value)) : undefined;
  }

  async set(key: string, amount: Xof, ttlSeconds: number): Promise<void> {
    await this.redis.set(key, String(amount), 'EX', ttlSeconds);
  }
}

/**
 * One promise per key while it runs: callers arriving during a flight share its result instead of starting
 * their own. In-process only, which is enough: across processes the Redis cache catches up after the first.
 */
export class SingleFlight<T> {
  readonly #running = new Map<string, Promise<T>>();

  run(key: string, work: () => Promise<T>): Promise<T> {
    const running = this.#running.get(key);
    if (running) return running;
    const flight = work().finally(() => this.#running.delete(key));
    this.#running.set(key, flight);
    // A flight may outlive every caller (they stop waiting at their time budget): its failure is theirs to
    // report, never an unhandled rejection.
    flight.catch(() => undefined);
    return flight;
  }

  get size(): number {
    return this.#running.size;
  }
}
