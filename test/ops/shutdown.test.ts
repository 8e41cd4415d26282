/**
 * SIGTERM, as an orchestrator sends it on every deploy, to the real `relais worker` and `relais web`
 * processes: what is in flight finishes, nothing acknowledged or started is lost, and the process exits 0.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { request } from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stableJobId } from '../../src/orders/queues.js';
import { postShopify, shipmentsFor, shopifyExternalId } from '../pipeline/helpers.js';
import { shopifyOrderPayload, shopifyWebhookHeaders } from '../support/factories.js';
import { SHOPIFY_DOMAIN, SHOPIFY_SHOP_ID, startTestRelais, waitFor, type TestRelais } from '../support/relais.js';
import { spawnWorker } from '../support/worker-process.js';

let relais: TestRelais;
const dir = mkdtempSync(join(tmpdir(), 'relais-shutdown-'));
const children: ChildProcess[] = [];

beforeAll(async () => {
  relais = await startTestRelais({ inProcessWorker: false });
});

afterAll(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await relais?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const exited = (child: ChildProcess) =>
  new Promise<number | null>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve(child.exitCode);
    else child.once('exit', (code) => resolve(code));
  });

describe('relais worker on SIGTERM', () => {
  it('finishes the job in flight (the order ends ready, one shipment), leaves nothing active and exits 0', async () => {
    const worker = await spawnWorker(relais);
    children.push(worker.child);
    // createShipment answers after 1.5 s: the job is mid-flight when the signal comes.
    relais.emulator.faults.add({ operation: 'createShipment', times: 1, fault: { kind: 'latency', ms: 1_500 } });
    const payload = shopifyOrderPayload();
    expect((await postShopify(relais, 'orders/create', payload)).status).toBe(200);
    const extId = shopifyExternalId(payload.id);
    const { ledger, queues } = relais.web.runtime;
    // The service has the createShipment request, and answers it 1.5 s later.
    await waitFor(async () => relais.emulator.calls().some((c) => c.operation === 'createShipment'), {
      what: 'createShipment in flight',
    });
    // The order is shipped by the job of its webhook, in flight now.
    expect((await queues.shopEvents.getJobCounts('active')).active).toBe(1);

    const exit = exited(worker.child);
    worker.child.kill('SIGTERM');
    await waitFor(async () => worker.output().includes('SIGTERM received'), {
      what: 'the worker to begin shutting down',
    });
    // While it drains, the worker tells the orchestrator it takes no new work.
    const readiness = await fetch(`${worker.opsUrl!}/readyz`);
    expect(readiness.status).toBe(503);
    expect(await readiness.json()).toMatchObject({ status: 'shutting_down' });
    expect(await exit).toBe(0);

    // No worker runs any more: whatever the order reached, it reached before the process exited.
    const record = await ledger.get(extId);
    expect(record?.state).toBe('ready');
    const shipments = shipmentsFor(relais, extId);
    expect(shipments).toHaveLength(1);
    expect(shipments[0]!.status).toBe('READY');
    for (const queue of queues.all()) expect((await queue.getJobCounts('active')).active, queue.name).toBe(0);
    expect(await queues.shopEvents.getJobCounts('completed', 'failed')).toEqual({ completed: 1, failed: 0 });
    expect(await queues.dispatch.getJobCounts('completed', 'failed')).toEqual({ completed: 0, failed: 0 });
    expect(worker.output()).toContain('SIGTERM received: finishing in-flight work, then stopping');
  });
});

describe('relais web on SIGTERM', () => {
  it('stops accepting connections, finishes the webhook being received, stores it, answers 200, then exits 0', async () => {
    const registry = join(dir, 'shops.json');
    writeFileSync(registry, JSON.stringify(relais.registryDocument));
    const child = spawn(join(process.cwd(), 'node_modules/.bin/tsx'), ['src/main/cli.ts', 'web'], {
      cwd: process.cwd(),
      env: {
        PATH: `${join(process.cwd(), 'node_modules/.bin')}:${process.env.PATH ?? ''}`,
        ...relais.env,
        REDIS_URL: relais.redis.url,
        RELAIS_SHOPS_FILE: registry,
        RELAIS_REDIS_PREFIX: relais.prefix,
        PORT: '0',
        LOG_LEVEL: 'info',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    let output = '';
    child.stdout.on('data', (d: Buffer) => {
      output += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      output += d.toString();
    });
    const url = await waitFor(
      async () => /"url":"(http:\/\/127\.0\.0\.1:\d+)".*web process listening/.exec(output)?.[1],
      { timeoutMs: 20_000, what: 'the web process to listen' },
    );
    const { port } = new URL(url);

    // A signed Shopify webhook whose body arrives slowly: half now, half after the signal.
    const body = JSON.stringify(shopifyOrderPayload());
    const eventId = randomUUID();
    const headers = shopifyWebhookHeaders({
      topic: 'orders/create',
      shopDomain: SHOPIFY_DOMAIN,
      body,
      secret: relais.secrets.shopifyClientSecret,
      eventId,
    });
    const answer = new Promise<{ status: number; connection: string | undefined; body: string }>((resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          port,
          method: 'POST',
          path: '/webhooks/shopify',
          agent: false,
          headers: { ...headers, 'content-length': Buffer.byteLength(body) },
        },
        (res) => {
          let text = '';
          res.on('data', (d: Buffer) => {
            text += d.toString();
          });
          res.on('end', () => resolve({ status: res.statusCode ?? 0, connection: res.headers.connection, body: text }));
        },
      );
      req.on('error', reject);
      req.write(body.slice(0, body.length / 2));
      // Signal once the connection is up and the server has had time to take the request in.
      req.once('socket', (socket) => socket.once('connect', () => setTimeout(() => child.kill('SIGTERM'), 300)));
      // The rest of the body, once the process has begun shutting down.
      void waitFor(async () => output.includes('SIGTERM received'), {
        what: 'the web process to begin shutting down',
      }).then(async () => {
        // Not listening any more: a new connection is refused, the one in flight goes on.
        await expect(fetch(`${url}/healthz`)).rejects.toThrow();
        req.end(body.slice(body.length / 2));
      }, reject);
    });
    const exit = exited(child);

    const response = await answer;
    expect(response.status).toBe(200);
    expect(JSON.parse(response.body)).toEqual({ status: 'enqueued' });
    expect(response.connection).toBe('close');
    expect(await exit).toBe(0);
    // Acknowledged means stored: the event is in the queue for the worker.
    const job = await relais.web.runtime.queues.shopEvents.getJob(
      stableJobId('evt', SHOPIFY_SHOP_ID, `orders/create|${eventId}`),
    );
    expect(job?.data.topic).toBe('orders/create');
  });
});
