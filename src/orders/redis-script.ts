/**
 * A Lua script run by its SHA1 (EVALSHA), loaded with EVAL the first time a server does not know it (after a
 * restart or SCRIPT FLUSH). One command and one round trip, whatever the script does.
 *
 * Why not ioredis's defineCommand: it adds the script to the connection's list, which ioredis copies onto every
 * pipeline it builds on that connection; and its commands are untyped.
 */
import { createHash } from 'node:crypto';
import type { RedisClient } from '../redis.js';

type ScriptArgument = string | number | Buffer;

export class RedisScript {
  private readonly sha: string;

  constructor(private readonly source: string) {
    this.sha = createHash('sha1').update(source).digest('hex');
  }

  /** Runs the script on the keys' node (they must share one Redis Cluster slot) and returns its reply. */
  async run(redis: RedisClient, keys: readonly string[], args: readonly ScriptArgument[]): Promise<unknown> {
    try {
      return await redis.evalsha(this.sha, keys.length, ...keys, ...args);
    } catch (error) {
      if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
      return redis.eval(this.source, keys.length, ...keys, ...args);
    }
  }
}
