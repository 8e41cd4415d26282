/**
 * Scale-out proof: Relais end to end on a real 3-master Redis Cluster, with two workers (one in this process,
 * one a `relais worker` process configured by REDIS_CLUSTER_NODES), the dispatch, Shopify and WooCommerce
 * emulators, signed order webhooks over real HTTP and couriers driven to the end. The prefix has no hash tag,
 * so each queue keeps its own slot (src/redis.ts, queuePrefix) and the keys spread over the masters: the test
 * checks they did, so it cannot pass on one node by accident.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QUEUE } from '../../src/orders/queues.js';
import { checkRedis } from '../../src/ops/doctor-checks.js';
import { checkRedisCluster } from '../../src/ops/redis-cluster-check.js';
import { expectNoAnomaly, startChaosStack, type ChaosStack } from '../chaos/support/stack.js';
import { startRedisCluster, type TestRedisCluster } from '../support/redis-cluster.js';
import { spawnWorker, type WorkerProcess } from '../support/worker-process.js';

const ORDERS = 40;
const PREFIX = `rc${process.pid}x${Math.random().toString(36).slice(2, 8)}`;

let cluster: TestRedisCluster;
let stack: ChaosStack;
let secondWorker: WorkerProcess | undefined;

beforeAll(async () => {
  cluster = await startRedisCluster(3);
  stack = await startChaosStack({ redisClusterNodes: cluster.nodes, prefix: PREFIX });
  secondWorker = await spawnWorker(stack.relais, { lockMs: 5_000 });
}, 120_000);

afterAll(async () => {
  await secondWorker?.kill('SIGTERM');
  await stack?.stop();
  await cluster?.stop();
});

describe('Relais on a 3-master Redis Cluster', { timeout: 240_000 }, () => {
  it(`ships each of ${ORDERS} orders exactly once with two workers, its keys spread over several masters`, async () => {
    const orders = await stack.placeMany(ORDERS);
    await Promise.all(orders.map((order) => stack.send(order)));
    await stack.waitDispatched(orders, { timeoutMs: 90_000 });
    await stack.driveCourier();
    const { report } = await stack.finish();
    expectNoAnomaly(report);

    // The dispatch emulator's own count: one shipment per external order id, for every order placed.
    const perOrder = new Map<string, number>();
    for (const shipment of stack.relais.emulator.shipments())
      perOrder.set(shipment.external_order_id, (perOrder.get(shipment.external_order_id) ?? 0) + 1);
    expect(orders.map((o) => perOrder.get(o.externalOrderId))).toEqual(orders.map(() => 1));

    // Every key of Relais (queues, de-duplication markers, caches) is under the prefix; more than one master holds some.
    const everything = await cluster.keysPerMaster(`${PREFIX}:*`);
    expect(Object.values(everything).filter((n) => n > 0).length, JSON.stringify(everything)).toBeGreaterThan(1);
    // Each queue's keys sit on exactly one master (one hash slot), and the queues are not all on the same one.
    const queueMasters = new Set<string>();
    for (const queue of Object.values(QUEUE)) {
      const held = Object.entries(await cluster.keysPerMaster(`${PREFIX}:{${queue}}:*`)).filter(([, n]) => n > 0);
      expect(held.length, `${queue}: ${JSON.stringify(held)}`).toBe(1);
      queueMasters.add(held[0]![0]);
    }
    expect(queueMasters.size).toBeGreaterThan(1);
  });

  it("keeps the service map's Redis copy in one hash per service, with its TTL, on the cluster", async () => {
    const map = stack.relais.worker.runtime.serviceMap;
    const learnedAt = new Date();
    const service = { id: 'svc-cluster', baseUrl: 'http://dispatch.invalid' };
    await map.record(service, [{ name: 'Ouakam', priced: true, totalXof: 2_300, quotedFor: 'Plateau', learnedAt }]);
    expect((await map.lookup(service.id, ['Ouakam', 'Ngor'])).get('Ouakam')?.priced).toBe(true);
    expect(await cluster.client().ttl(`${PREFIX}:service-map:svc-cluster`)).toBeGreaterThan(0);
  });

  it('doctor reports the cluster ok from one seed and checks each of its 3 masters as a server', async () => {
    const results = await checkRedisCluster([cluster.nodes[0]!], 5_000, checkRedis);
    expect(results[0]).toMatchObject({ name: 'cluster', status: 'ok' });
    expect(results[0]!.detail).toContain('3 masters');
    const reachable = results.filter((r) => r.name.endsWith(' reachable'));
    expect(reachable.map((r) => [r.name.split(' ')[0], r.status]).sort()).toEqual(
      [...cluster.nodes].sort().map((node) => [node, 'ok']),
    );
    // These test masters keep nothing on disk: each is warned about, by its address.
    expect(results.filter((r) => r.name.endsWith(' persistence')).map((r) => r.status)).toEqual([
      'warn',
      'warn',
      'warn',
    ]);
  });

  it('doctor says no seed answered when none of the cluster nodes does, naming each', async () => {
    const results = await checkRedisCluster(['127.0.0.1:1'], 1_000, checkRedis);
    expect(results).toEqual([expect.objectContaining({ name: 'cluster', status: 'error' })]);
    expect(results[0]!.detail).toContain('127.0.0.1:1');
  });
});
