/**
 * `relais reconcile --json` run once against a bench's stack, as an operator runs it: its own process (the CLI,
 * src/main/cli.ts), the stack's Redis and ledger, the registry in a file. Measured from outside: wall time, the
 * process's peak RSS, and the SQL statements and Redis commands it sent (count-on-exit.ts), so a run that read
 * orders one at a time would show as about one statement per order.
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { z } from 'zod';
import { SHOPIFY_SHOP_ID } from '../../test/support/relais.js';
import { ROOT } from './build.js';
import type { BenchStack } from './stack.js';

const countsSchema = z.object({ sqlStatements: z.number(), redisCommands: z.number(), maxRssBytes: z.number() });
const reportSchema = z.object({
  shops: z.array(
    z.object({
      shopId: z.string(),
      ordersChecked: z.number(),
      shipmentsChecked: z.number(),
      findings: z.array(z.object({ kind: z.string() })),
      error: z.string().optional(),
    }),
  ),
});

export interface ReconcileMeasure {
  exitCode: number;
  seconds: number;
  counts: z.infer<typeof countsSchema>;
  shops: z.infer<typeof reportSchema>['shops'];
}

export async function runReconcile(stack: BenchStack): Promise<ReconcileMeasure> {
  const registryFile = join(stack.logDir, 'shops.json');
  writeFileSync(registryFile, JSON.stringify(stack.registry));
  const started = performance.now();
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      '--import',
      join(ROOT, 'bench/lib/count-on-exit.ts'),
      join(ROOT, 'src/main/cli.ts'),
      'reconcile',
      '--json',
      '--shop',
      SHOPIFY_SHOP_ID,
    ],
    {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '',
        ...stack.childSecrets,
        REDIS_URL: stack.redis.url,
        RELAIS_REDIS_PREFIX: stack.prefix,
        RELAIS_SHOPS_FILE: registryFile,
        LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const exitCode = await new Promise<number>((resolve) => child.on('exit', (code) => resolve(code ?? 1)));
  const seconds = (performance.now() - started) / 1000;
  writeFileSync(join(stack.logDir, 'reconcile.stderr.log'), stderr);
  const line = stderr.split('\n').find((l) => l.startsWith('BENCH_COUNTS '));
  if (!line || (exitCode !== 0 && exitCode !== 2))
    throw new Error(`relais reconcile exited ${exitCode}; see ${join(stack.logDir, 'reconcile.stderr.log')}`);
  const counts = countsSchema.parse(JSON.parse(line.slice('BENCH_COUNTS '.length)));
  const { shops } = reportSchema.parse(JSON.parse(stdout));
  return { exitCode, seconds, counts, shops };
}
