/**
 * Neighbourhood aliases added by operators while Relais runs (`relais alias add`, the dashboard), on top
 * of the ones in the shop registry. Kept in Redis so the fix for a held order takes effect for every
 * worker at once, without a restart, and survives restarts.
 */
import type { Redis } from 'ioredis';

export class AliasStore {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  private key(shopId: string): string {
    return `${this.prefix}:aliases:${shopId}`;
  }

  async add(shopId: string, text: string, neighbourhood: string): Promise<void> {
    await this.redis.hset(this.key(shopId), text.trim(), neighbourhood.trim());
  }

  async remove(shopId: string, text: string): Promise<boolean> {
    return (await this.redis.hdel(this.key(shopId), text.trim())) > 0;
  }

  async list(shopId: string): Promise<Record<string, string>> {
    return this.redis.hgetall(this.key(shopId));
  }

  /** Every alias in force for a shop: the registry's, overridden by those added at run time. */
  async forShop(shop: { id: string; policy: { neighbourhoodAliases: Record<string, string> } }): Promise<Record<string, string>> {
    return { ...shop.policy.neighbourhoodAliases, ...(await this.list(shop.id)) };
  }
}
