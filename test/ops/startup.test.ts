/**
 * `relais web` and `relais worker` started while Redis is down: they retry for a bounded time, saying so,
 * then exit non-zero with a message naming Redis and what to do, instead of hanging silently. Real
 * processes, pointed at a port where nothing listens.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { freePort } from '../support/redis.js';
import { makeSecrets, registryDocument, secretEnv } from '../support/relais.js';

async function runCli(args: string[], extraEnv: Record<string, string>, killAfterMs: number): Promise<{ code: number | null; stderr: string; afterMs: number }> {
  const registry = join(mkdtempSync(join(tmpdir(), 'relais-startup-')), 'shops.json');
  writeFileSync(registry, JSON.stringify(registryDocument({ dispatchBaseUrl: 'http://127.0.0.1:9' })));
  const env = {
    PATH: process.env.PATH ?? '', ...secretEnv(makeSecrets()), RELAIS_SHOPS_FILE: registry, REDIS_URL: `redis://127.0.0.1:${String(await freePort())}`,
    PORT: '0', RELAIS_WORKER_METRICS_PORT: '0', LOG_LEVEL: 'warn', ...extraEnv,
  };
  const started = Date.now();
  const child = spawn(join(process.cwd(), 'node_modules/.bin/tsx'), ['src/main/cli.ts', ...args], { env, cwd: process.cwd(), stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => { stderr += d.toString(); });
  child.stdout.on('data', () => undefined);
  const killer = setTimeout(() => child.kill('SIGKILL'), killAfterMs);
  const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
  clearTimeout(killer);
  return { code, stderr, afterMs: Date.now() - started };
}

describe('starting with Redis down', () => {
  it('relais web exits 1 within 30 s, saying Redis did not answer at which URL and what to do', async () => {
    const { code, stderr, afterMs } = await runCli(['web'], {}, 40_000);
    expect(code).toBe(1);
    expect(afterMs).toBeLessThan(30_000);
    expect(stderr).toMatch(/relais: Redis at redis:\/\/127\.0\.0\.1:\d+\/? did not answer within 20 s .*Start Redis, or point REDIS_URL at it/);
  }, 45_000);

  it('relais worker exits 1 once RELAIS_REDIS_WAIT_MS has passed, naming the wait in its message', async () => {
    const { code, stderr, afterMs } = await runCli(['worker'], { RELAIS_REDIS_WAIT_MS: '3000' }, 40_000);
    expect(code).toBe(1);
    expect(afterMs).toBeLessThan(15_000);
    expect(stderr).toContain('did not answer within 3 s');
  }, 45_000);

  it('never prints a Redis password in the message', async () => {
    const port = await freePort();
    const { stderr } = await runCli(['web'], { REDIS_URL: `redis://relais:hunter2-secret@127.0.0.1:${String(port)}`, RELAIS_REDIS_WAIT_MS: '1000' }, 40_000);
    expect(stderr).toContain('did not answer');
    expect(stderr).not.toContain('hunter2-secret');
  }, 45_000);
});
