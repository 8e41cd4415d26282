/**
 * The service map in a real PostgreSQL, read through a real Redis: what a service showed of each name is kept
 * per service, the newest answer wins, and Redis only caches it (losing the cache loses nothing).
 */
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedis, type TestRedis } from '../../../test/support/redis.js';
import { startTestDatabase, type TestDatabase } from '../../../test/support/postgres.js';
import { CachedServiceMap } from '../../ledger/service-map-cache.js';
import type { NamePrice } from '../../ledger/service-map.js';
import { PostgresServiceMap } from './pg-service-map.js';

let db: TestDatabase;
let redis: TestRedis;
let client: Redis;
beforeAll(async () => {
  [db, redis] = await Promise.all([startTestDatabase(), startRedis()]);
  client = redis.client();
});
afterAll(async () => {
  client?.disconnect();
  await Promise.all([db?.stop(), redis?.stop()]);
});

const price = (name: string, priced: boolean, totalXof: number, at: string): NamePrice => ({
  name,
  priced,
  totalXof,
  quotedFor: 'Plateau|0-1kg|cash_on_delivery',
  learnedAt: new Date(at),
});
const service = (id: string) => ({ id, baseUrl: 'https://dispatch.example' });

describe('the service map', () => {
  it('keeps what each service showed of a name apart from what another service showed of it', async () => {
    const map = new PostgresServiceMap(db.pool());
    await map.record(service('svc-a'), [price('Mermoz', true, 2_300, '2026-11-27T10:00:00Z')]);
    await map.record(service('svc-b'), [price('Mermoz', false, 4_800, '2026-11-27T10:00:00Z')]);
    expect((await map.lookup('svc-a', ['Mermoz', 'Ouakam'])).get('Mermoz')).toMatchObject({
      priced: true,
      totalXof: 2_300,
    });
    expect((await map.lookup('svc-b', ['Mermoz'])).get('Mermoz')?.priced).toBe(false);
    expect((await map.lookup('svc-a', ['Ouakam'])).size).toBe(0);
  });

  it('lets a newer answer replace an older one, never the other way round', async () => {
    const map = new PostgresServiceMap(db.pool());
    await map.record(service('svc-c'), [price('Ngor', false, 4_800, '2026-11-27T10:00:00Z')]);
    await map.record(service('svc-c'), [price('Ngor', true, 2_800, '2026-11-27T11:00:00Z')]);
    await map.record(service('svc-c'), [price('Ngor', false, 4_800, '2026-11-27T09:00:00Z')]);
    expect(await map.all('svc-c')).toEqual([price('Ngor', true, 2_800, '2026-11-27T11:00:00Z')]);
  });

  it('answers from Redis once loaded, with names learned since, and from PostgreSQL again when the cache is gone', async () => {
    const durable = new PostgresServiceMap(db.pool());
    const prefix = `{${redis.prefix}}`;
    const cached = new CachedServiceMap(durable, client, prefix);
    await durable.record(service('svc-d'), [price('Yoff', true, 2_300, '2026-11-27T10:00:00Z')]);
    expect((await cached.lookup('svc-d', ['Yoff'])).get('Yoff')?.totalXof).toBe(2_300);

    // A row changed behind the cache's back is not seen until the cache goes: Redis is what is read.
    await db.pool().query("UPDATE service_map SET total_xof = 9 WHERE service_id = 'svc-d'");
    expect((await cached.lookup('svc-d', ['Yoff'])).get('Yoff')?.totalXof).toBe(2_300);
    await cached.record(service('svc-d'), [price('Ngor', false, 4_800, '2026-11-27T10:05:00Z')]);
    expect((await cached.lookup('svc-d', ['Ngor', 'Yoff'])).get('Ngor')?.priced).toBe(false);
    const key = `${prefix}:service-map:svc-d`;
    expect(await client.ttl(key)).toBeGreaterThan(0);

    await client.del(key);
    const reloaded = await cached.lookup('svc-d', ['Ngor', 'Yoff']);
    expect(reloaded.get('Yoff')?.totalXof).toBe(9);
    expect(reloaded.get('Ngor')?.priced).toBe(false);
  });
});
