/**
 * Counts what a bench process sends to its stores, from inside the process: every SQL statement handed to a
 * `pg` client (pool.query lands there too; BEGIN and COMMIT count as statements) and every command handed to an
 * ioredis connection (a script is one command, a MULTI's commands count one each, as do a pipeline's).
 *
 * Why inside the process: the Redis server's total_commands_processed counts the commands a script runs as well
 * (a BullMQ job's scripts make most of its count), and PostgreSQL 15 here has no pg_stat_statements; what the
 * process sends is the number of requests each store has to answer, the same way for Relais and the baselines.
 * The prototypes are wrapped once, before anything connects; nothing else about the calls changes.
 */
import pg from 'pg';
import { Redis } from 'ioredis';

export interface StoreCounts {
  sqlStatements: number;
  redisCommands: number;
}

const counts: StoreCounts = { sqlStatements: 0, redisCommands: 0 };
let installed = false;

export function countStoreRequests(): void {
  if (installed) return;
  installed = true;
  const query = pg.Client.prototype.query as (...args: unknown[]) => unknown;
  pg.Client.prototype.query = function counted(this: pg.Client, ...args: unknown[]) {
    counts.sqlStatements += 1;
    return query.apply(this, args);
  } as typeof pg.Client.prototype.query;
  const send = Redis.prototype.sendCommand as (...args: unknown[]) => unknown;
  Redis.prototype.sendCommand = function counted(this: Redis, ...args: unknown[]) {
    counts.redisCommands += 1;
    return send.apply(this, args);
  } as typeof Redis.prototype.sendCommand;
}

export function storeCounts(): StoreCounts {
  return { ...counts };
}
