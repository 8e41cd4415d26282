/**
 * The service map (service-map.ts) read through Redis: the dispatch path asks for a few names per order, and
 * PostgreSQL keeps the map. One hash per service, loaded whole from PostgreSQL on a miss and kept an hour
 * (every write sets its TTL: Redis holds no knowledge of its own). A name learned is written to both.
 * A "loaded" field tells a hash loaded whole from one that only holds the names written since it expired.
 */
import type { RedisClient } from '../redis.js';
import type { NamePrice, ServiceMapStore, ServiceRef } from './service-map.js';

const CACHE_TTL_SECONDS = 3600;
const LOADED = ':loaded';

interface Cached {
  p: boolean;
  t: number;
  q: string;
  at: string;
}

const encode = (p: NamePrice): string =>
  JSON.stringify({ p: p.priced, t: p.totalXof, q: p.quotedFor, at: p.learnedAt.toISOString() } satisfies Cached);
const decode = (name: string, raw: string): NamePrice => {
  const c = JSON.parse(raw) as Cached;
  return { name, priced: c.p, totalXof: c.t, quotedFor: c.q, learnedAt: new Date(c.at) };
};

export class CachedServiceMap implements ServiceMapStore {
  constructor(
    private readonly durable: ServiceMapStore,
    private readonly redis: RedisClient,
    private readonly prefix: string,
  ) {}

  private key(serviceId: string): string {
    return `${this.prefix}:service-map:${serviceId}`;
  }

  async record(service: ServiceRef, prices: NamePrice[]): Promise<void> {
    if (prices.length === 0) return;
    await this.durable.record(service, prices);
    const key = this.key(service.id);
    await this.redis
      .multi()
      .hset(key, Object.fromEntries(prices.map((p) => [p.name, encode(p)])))
      .expire(key, CACHE_TTL_SECONDS)
      .exec();
  }

  async lookup(serviceId: string, names: string[]): Promise<Map<string, NamePrice>> {
    const key = this.key(serviceId);
    const [loaded, ...values] = await this.redis.hmget(key, LOADED, ...names);
    if (loaded === null) return this.load(serviceId, names);
    const found = new Map<string, NamePrice>();
    values.forEach((raw, i) => {
      if (raw) found.set(names[i]!, decode(names[i]!, raw));
    });
    return found;
  }

  all(serviceId: string): Promise<NamePrice[]> {
    return this.durable.all(serviceId);
  }

  /** A miss: the whole map from PostgreSQL into the hash, then the names asked for. */
  private async load(serviceId: string, names: string[]): Promise<Map<string, NamePrice>> {
    const all = await this.durable.all(serviceId);
    const key = this.key(serviceId);
    await this.redis
      .multi()
      .hset(key, { [LOADED]: '1', ...Object.fromEntries(all.map((p) => [p.name, encode(p)])) })
      .expire(key, CACHE_TTL_SECONDS)
      .exec();
    const wanted = new Set(names);
    return new Map(all.filter((p) => wanted.has(p.name)).map((p) => [p.name, p]));
  }
}
