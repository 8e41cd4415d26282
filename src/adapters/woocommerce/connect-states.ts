/**
 * Where a WooCommerce connection waits between its three moments (connect.ts): begun on the Connect page, the keys
 * posted by the store to the callback, the merchant's browser back on the return page. Both records live in Redis
 * for a limited time, so every web process sees them and an abandoned connection leaves nothing behind.
 *
 *  pending   user_id → the store URL, the Relais shop id and the browser session that began; taken once (GETDEL),
 *            so a callback replayed with the same user_id finds nothing.
 *  outcome   user_id → what the callback did (connected, or why not), read by the return page. No secret in it.
 */
import { z } from 'zod';
import type { RedisClient } from '../../redis.js';

const pendingSchema = z.object({ storeUrl: z.string(), shopId: z.string(), binding: z.string().nullable() });
export type PendingConnect = z.infer<typeof pendingSchema>;

const outcomeSchema = z.object({
  shopId: z.string(),
  binding: z.string().nullable(),
  connected: z.boolean(),
  /** Said on the return page: what was done, or why nothing was. */
  message: z.string(),
});
export type ConnectOutcome = z.infer<typeof outcomeSchema>;

export interface ConnectStates {
  putPending(userId: string, pending: PendingConnect, ttlMs: number): Promise<void>;
  /** The pending connection, removed: a user_id works once. */
  takePending(userId: string): Promise<PendingConnect | undefined>;
  peekPending(userId: string): Promise<PendingConnect | undefined>;
  putOutcome(userId: string, outcome: ConnectOutcome, ttlMs: number): Promise<void>;
  outcome(userId: string): Promise<ConnectOutcome | undefined>;
}

const parsed = <T>(schema: z.ZodType<T>, text: string | null): T | undefined => {
  if (text === null) return undefined;
  const result = schema.safeParse(JSON.parse(text));
  return result.success ? result.data : undefined;
};

export class RedisConnectStates implements ConnectStates {
  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
  ) {}

  #key(kind: 'pending' | 'outcome', userId: string): string {
    return `${this.prefix}:woo-connect:${kind}:${userId}`;
  }
  async putPending(userId: string, pending: PendingConnect, ttlMs: number): Promise<void> {
    await this.redis.set(this.#key('pending', userId), JSON.stringify(pending), 'PX', ttlMs);
  }
  async takePending(userId: string): Promise<PendingConnect | undefined> {
    return parsed(pendingSchema, await this.redis.getdel(this.#key('pending', userId)));
  }
  async peekPending(userId: string): Promise<PendingConnect | undefined> {
    return parsed(pendingSchema, await this.redis.get(this.#key('pending', userId)));
  }
  async putOutcome(userId: string, outcome: ConnectOutcome, ttlMs: number): Promise<void> {
    await this.redis.set(this.#key('outcome', userId), JSON.stringify(outcome), 'PX', ttlMs);
  }
  async outcome(userId: string): Promise<ConnectOutcome | undefined> {
    return parsed(outcomeSchema, await this.redis.get(this.#key('outcome', userId)));
  }
}
