import { describe, expect, it } from 'vitest';
import { DispatchError } from '../adapters/dispatch-api/errors.js';
import { checkReadiness, readinessBody } from './health.js';
import { boundedLabel, dispatchErrorCode, RelaisMetrics, webhookRouteLabel, type CountableQueue } from './metrics.js';

describe('metric labels', () => {
  it('a webhook is labelled by its route pattern, never by its URL (the delivery-webhook path carries a secret token)', () => {
    expect(webhookRouteLabel('/webhooks/shopify')).toBe('/webhooks/shopify');
    expect(webhookRouteLabel('/webhooks/woocommerce/abidjan-tech')).toBe('/webhooks/woocommerce/:shopId');
    expect(webhookRouteLabel('/webhooks/dispatch/dakar-mode/9f2c0d1e5b7a4c3d')).toBe(
      '/webhooks/dispatch/:shopId/:token',
    );
    expect(webhookRouteLabel('/webhooks/anything/else/entirely')).toBe('other');
  });

  it('free text never becomes a label value', () => {
    expect(boundedLabel('neighbourhood_not_found')).toBe('neighbourhood_not_found');
    expect(boundedLabel("no neighbourhood found in 'Rue 10, Dakar'")).toBe('other');
    expect(boundedLabel('x'.repeat(65))).toBe('other');
    expect(boundedLabel(undefined)).toBe('other');
  });

  it('a failed dispatch call is counted under the service code, else the HTTP status, else the kind of failure', () => {
    const base = { operation: 'createQuote', message: 'refused', retryable: false } as const;
    expect(dispatchErrorCode(new DispatchError({ ...base, kind: 'http', status: 422, code: 'INVALID_ADDRESS' }))).toBe(
      'INVALID_ADDRESS',
    );
    expect(dispatchErrorCode(new DispatchError({ ...base, kind: 'http', status: 502 }))).toBe('http_502');
    expect(dispatchErrorCode(new DispatchError({ ...base, kind: 'timeout' }))).toBe('timeout');
    expect(dispatchErrorCode(new Error('boom'))).toBe('error');
  });
});

describe('the queue gauge', () => {
  const queue = (name: string, counts: () => Promise<Record<string, number>>): CountableQueue => ({
    name,
    getJobCounts: counts,
  });

  it('reports each queue that answers and leaves out, within a second, one that does not', async () => {
    const metrics = new RelaisMetrics({ defaultMetrics: false });
    metrics.watchQueues([
      queue('dispatch', async () => ({ waiting: 3, active: 1 })),
      queue('deliveries', () => new Promise(() => undefined)),
    ]);
    const started = Date.now();
    const text = await metrics.text();
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(text).toContain('relais_queue_jobs{queue="dispatch",state="waiting"} 3');
    expect(text).toContain('relais_queue_jobs{queue="dispatch",state="failed"} 0');
    expect(text).not.toContain('queue="deliveries"');
  });

  it('two processes in one test run keep separate registries', async () => {
    const a = new RelaisMetrics({ defaultMetrics: false });
    const b = new RelaisMetrics({ defaultMetrics: false });
    a.orderReceived('dakar-mode', 'shopify');
    expect(await a.text()).toContain('relais_orders_received_total{shop="dakar-mode",platform="shopify"} 1');
    expect(await b.text()).not.toContain('relais_orders_received_total{');
  });
});

describe('readiness', () => {
  it('a probe that hangs fails after the bound with its reason; shutting down is never ready', async () => {
    const hanging = { name: 'redis', check: () => new Promise<void>(() => undefined) };
    const fine = { name: 'queues', check: async () => undefined };
    const readiness = await checkReadiness([hanging, fine], { timeoutMs: 50 });
    expect(readinessBody(readiness)).toEqual({
      status: 503,
      body: { status: 'not_ready', redis: 'no answer within 50 ms', queues: 'ok' },
    });
    expect(readinessBody(await checkReadiness([fine], { shuttingDown: true }))).toEqual({
      status: 503,
      body: { status: 'shutting_down', queues: 'ok' },
    });
    expect(readinessBody(await checkReadiness([fine]))).toEqual({
      status: 200,
      body: { status: 'ready', queues: 'ok' },
    });
  });
});
