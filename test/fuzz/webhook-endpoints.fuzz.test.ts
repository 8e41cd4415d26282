/**
 * Generated webhook requests against a running Relais (real Redis, real HTTP, worker running): random
 * bytes, random JSON, real order bodies with a wrong or missing signature, huge headers, wrong content
 * types, unicode in bodies and header values. Whatever arrives:
 *   - the answer is never a 5xx (Redis is up: a 5xx here would be a crash path);
 *   - nothing unsigned is enqueued: job counts of every queue, de-duplication keys and ledger unchanged;
 *   - the web process still answers /healthz and /readyz afterwards.
 * Requests are written on a raw socket so the generator, not an HTTP client's validation, decides the bytes.
 *
 * A second property sends nonsense that IS correctly signed: Relais may accept it, but the intake job must
 * hold or ignore it, never crash or retry forever.
 */
import { connect } from 'node:net';
import fc from 'fast-check';
import { SeenEvents } from '../../src/http/seen-events.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  shopifyOrderPayload,
  shopifyWebhookHeaders,
  signShopify,
  wooOrderPayload,
  wooWebhookHeaders,
} from '../support/factories.js';
import {
  SHOPIFY_DOMAIN,
  SHOPIFY_SHOP_ID,
  startTestRelais,
  waitFor,
  WOO_SHOP_ID,
  type TestRelais,
} from '../support/relais.js';

let relais: TestRelais;
beforeAll(async () => {
  relais = await startTestRelais();
});
afterAll(async () => {
  await relais?.stop();
});

interface RawAnswer {
  status: number | undefined;
  head: string;
}

/** One request, exactly these bytes, on a fresh connection; resolves with the status line's code. */
function rawRequest(
  baseUrl: string,
  path: string,
  headers: [string, Buffer | string][],
  body: Buffer,
): Promise<RawAnswer> {
  const { hostname, port } = new URL(baseUrl);
  const lines: Uint8Array[] = [
    Buffer.from(`POST ${path} HTTP/1.1\r\nHost: ${hostname}:${port}\r\nConnection: close\r\n`),
  ];
  for (const [name, value] of headers)
    lines.push(
      Buffer.from(`${name}: `),
      Buffer.isBuffer(value) ? value : Buffer.from(value, 'utf8'),
      Buffer.from('\r\n'),
    );
  lines.push(Buffer.from(`Content-Length: ${body.length}\r\n\r\n`), body);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    // write(), not end(): a half-closed client makes Node's server drop the request before an async handler answers.
    const socket = connect({ host: hostname, port: Number(port) }, () => socket.write(Buffer.concat(lines)));
    socket.setTimeout(10_000, () => socket.destroy(new Error(`no answer to POST ${path} within 10 s`)));
    socket.on('data', (d: Buffer) => chunks.push(d));
    // The server may close before reading a body it already refused (413, 431): the answer is what counts.
    socket.on('error', (error: NodeJS.ErrnoException) =>
      error.code === 'ECONNRESET' || error.code === 'EPIPE' ? undefined : reject(error),
    );
    socket.on('close', () => {
      const head = Buffer.concat(chunks).toString('latin1').split('\r\n\r\n', 1)[0] ?? '';
      const status = /^HTTP\/1\.[01] (\d{3})/.exec(head)?.[1];
      resolve({ status: status === undefined ? undefined : Number(status), head });
    });
  });
}

/** Everything Relais writes when it accepts a webhook: jobs in any state, dedupe keys, ledger entries. */
async function footprint(): Promise<Record<string, number>> {
  const { shopEvents, dispatch, deliveries } = relais.web.runtime.queues;
  const sum = (counts: Record<string, number>) => Object.values(counts).reduce((a, b) => a + b, 0);
  const redis = relais.web.runtime.redis;
  const keys = async (pattern: string) => (await redis.keys(`${relais.prefix}:${pattern}`)).length;
  return {
    shopEvents: sum(await shopEvents.getJobCounts()),
    dispatch: sum(await dispatch.getJobCounts()),
    deliveries: sum(await deliveries.getJobCounts()),
    dedupeMarkers: await new SeenEvents(redis, relais.prefix).count(),
    ledgerOrders: await keys('order:*'),
  };
}

const bytes = (maxLength: number) => fc.uint8Array({ maxLength }).map((a) => Buffer.from(a));
/** Any code point, lone surrogates included (fast-check's 'binary' unit does the same but builds a table for a second first). */
const anyCodePoint = fc.integer({ min: 0, max: 0x10ffff }).map((c) => String.fromCodePoint(c));
const text = (maxLength: number) =>
  fc.oneof(
    fc.string({ unit: 'grapheme', maxLength }),
    fc.string({ unit: anyCodePoint, maxLength }),
    fc.string({ unit: 'grapheme-ascii', maxLength }),
  );
/** Header bytes may be anything but a line break (which would start another header or end the block). */
const oneLine = (b: Buffer): Buffer => Buffer.from(b.map((byte) => (byte === 0x0a || byte === 0x0d ? 0x20 : byte)));
const body = fc.oneof(
  bytes(2048),
  fc.json({ maxDepth: 4 }).map((j) => Buffer.from(j)),
  text(300).map((s) => Buffer.from(s, 'utf8')),
  fc.constant(null).map(() => Buffer.from(JSON.stringify(shopifyOrderPayload()))),
  fc.constant(null).map(() => Buffer.from(JSON.stringify(wooOrderPayload()))),
  fc.string({ maxLength: 30 }).map((s) => Buffer.from(`webhook_id=${s}`)),
  fc.constant(Buffer.alloc(0)),
);
const contentType = fc.option(
  fc.oneof(
    fc.constantFrom(
      'application/json',
      'application/json; charset=utf-8',
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=zz',
      'application/octet-stream',
      '*/*',
      '',
    ),
    text(40),
  ),
  { nil: undefined },
);
/** Header values as raw bytes: unicode in UTF-8 or Latin-1, and the odd control character. */
const headerValue = fc.oneof(
  text(60).map((s) => oneLine(Buffer.from(s, 'utf8'))),
  text(60).map((s) => oneLine(Buffer.from(s, 'latin1'))),
  fc.base64String({ maxLength: 64 }),
);
/** Now and then one header far past Node's 16 kB header limit, or just under it. */
const hugeHeader = fc.oneof(
  { weight: 4, arbitrary: fc.constant(undefined) },
  {
    weight: 1,
    arbitrary: fc
      .tuple(
        fc.constantFrom('X-Padding', 'X-Shopify-Topic', 'Cookie', 'X-WC-Webhook-Topic'),
        fc.integer({ min: 1_000, max: 40_000 }),
      )
      .map(([name, size]): [string, string] => [name, 'a'.repeat(size)]),
  },
);

/** Shopify's header set with a signature that cannot be right: random, another secret's, or another body's. */
const shopifySignatureHeaders = (raw: Buffer) =>
  fc
    .tuple(
      fc.constantFrom('random', 'other secret', 'other body', 'missing'),
      fc.constantFrom(SHOPIFY_DOMAIN, 'someone-else.myshopify.com', ''),
      fc.constantFrom('orders/create', 'orders/paid', 'orders/cancelled', 'customers/redact', 'app/uninstalled', ''),
      fc.base64String({ minLength: 44, maxLength: 44 }),
      fc.subarray(['X-Shopify-API-Version', 'X-Shopify-Webhook-Id', 'X-Shopify-Event-Id', 'X-Shopify-Triggered-At']),
    )
    .map(([signature, domain, topic, random, dropped]) => {
      const all = shopifyWebhookHeaders({ topic, shopDomain: domain, body: raw, secret: 'not-the-client-secret' });
      if (signature === 'random') all['X-Shopify-Hmac-Sha256'] = random;
      if (signature === 'other body')
        all['X-Shopify-Hmac-Sha256'] = signShopify(
          Buffer.concat([raw, Buffer.from(' ')]),
          relais.secrets.shopifyClientSecret,
        );
      if (signature === 'missing') delete all['X-Shopify-Hmac-Sha256'];
      for (const name of dropped) delete all[name];
      delete all['Content-Type'];
      return Object.entries(all);
    });

const wooSignatureHeaders = (raw: Buffer) =>
  fc
    .tuple(
      fc.constantFrom('random', 'other secret', 'missing', 'no headers'),
      fc.constantFrom('order.created', 'order.updated', 'product.created', ''),
      fc.base64String({ maxLength: 44 }),
    )
    .map(([signature, topic, random]) => {
      if (signature === 'no headers') return [];
      const all = wooWebhookHeaders({ topic, body: raw, secret: 'not-the-woo-secret' });
      if (signature === 'random') all['X-WC-Webhook-Signature'] = random;
      if (signature === 'missing') delete all['X-WC-Webhook-Signature'];
      delete all['Content-Type'];
      return Object.entries(all);
    });

const unsignedRequest = fc
  .record({
    target: fc.constantFrom('shopify', 'woo', 'woo unknown shop', 'dispatch wrong token', 'dispatch unknown shop'),
    raw: body,
    contentType,
    extra: fc.array(
      fc.tuple(
        fc.constantFrom('X-Note', 'User-Agent', 'X-Shopify-Shop-Domain', 'X-WC-Webhook-Source', 'Accept'),
        headerValue,
      ),
      { maxLength: 3 },
    ),
    huge: hugeHeader,
    token: fc.string({ unit: fc.constantFrom(...'abcdef0123456789'), minLength: 1, maxLength: 64 }),
  })
  .chain((r) => {
    const signed =
      r.target === 'shopify'
        ? shopifySignatureHeaders(r.raw)
        : r.target.startsWith('woo')
          ? wooSignatureHeaders(r.raw)
          : fc.constant([] as [string, string][]);
    return signed.map((headers) => ({ ...r, headers }));
  });

function pathOf(target: string, token: string): string {
  switch (target) {
    case 'shopify':
      return '/webhooks/shopify';
    case 'woo':
      return `/webhooks/woocommerce/${WOO_SHOP_ID}`;
    case 'woo unknown shop':
      return `/webhooks/woocommerce/${token}`;
    // The real token is 32 hex characters; the generated one never equals it (checked below).
    case 'dispatch wrong token':
      return `/webhooks/dispatch/${SHOPIFY_SHOP_ID}/${token}`;
    default:
      return `/webhooks/dispatch/${token}/${token}`;
  }
}

describe('webhook endpoints under generated input', () => {
  it('never answer a 5xx, enqueue nothing unsigned, and keep answering health checks', async () => {
    const before = await footprint();
    const seen = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(unsignedRequest, async (r) => {
        fc.pre(r.token !== relais.secrets.dispatchWebhookToken);
        const headers: [string, Buffer | string][] = [...r.headers, ...r.extra];
        if (r.contentType !== undefined) headers.push(['Content-Type', oneLine(Buffer.from(r.contentType, 'utf8'))]);
        if (r.huge) headers.push(r.huge);
        const answer = await rawRequest(relais.web.url, pathOf(r.target, r.token), headers, r.raw);
        expect(answer.status, `no status line in: ${answer.head.slice(0, 200)}`).toBeDefined();
        expect(answer.status).toBeLessThan(500);
        seen.set(answer.status ?? 0, (seen.get(answer.status ?? 0) ?? 0) + 1);
      }),
      { numRuns: 250 },
    );
    // The generator reached the refusals that matter, not just one kind of answer.
    expect([...seen.keys()].filter((s) => s >= 400).length).toBeGreaterThanOrEqual(3);
    expect(await footprint()).toEqual(before);
    expect((await fetch(`${relais.web.url}/healthz`)).status).toBe(200);
    expect((await fetch(`${relais.web.url}/readyz`)).status).toBe(200);
  });

  it('hold or ignore signed nonsense: no 5xx, no intake job failing or retrying, the process still answering', async () => {
    const junkValue = fc.oneof(
      fc.jsonValue({ maxDepth: 2 }),
      text(40),
      fc.constant(null),
      fc.double(),
      fc.constant(-1),
      fc.constant('15000.50'),
    );
    const mangledOrder = fc
      .tuple(
        fc.subarray([
          'id',
          'total_price',
          'total_outstanding',
          'currency',
          'shipping_address',
          'line_items',
          'payment_gateway_names',
          'financial_status',
          'name',
          'total_weight',
          'customer',
          'cancelled_at',
        ]),
        fc.array(junkValue, { minLength: 12, maxLength: 12 }),
      )
      .map(([keys, values]) => {
        const order: Record<string, unknown> = shopifyOrderPayload();
        keys.forEach((key, i) => (order[key] = values[i]));
        return Buffer.from(JSON.stringify(order));
      });
    const signedBody = fc.oneof(
      mangledOrder,
      fc.json({ maxDepth: 3 }).map((j) => Buffer.from(j)),
      bytes(512),
      text(200).map((s) => Buffer.from(s)),
    );
    const WOO_TOPIC = {
      create: 'order.created',
      paid: 'order.updated',
      updated: 'order.updated',
      cancelled: 'order.deleted',
    } as const;
    const request = fc.record({
      platform: fc.constantFrom('shopify', 'woo'),
      topic: fc.constantFrom('create', 'paid', 'updated', 'cancelled'),
      raw: signedBody,
    });

    const statuses = new Set<number>();
    await fc.assert(
      fc.asyncProperty(request, async ({ platform, topic, raw }) => {
        const headers =
          platform === 'shopify'
            ? shopifyWebhookHeaders({
                topic: `orders/${topic}`,
                shopDomain: SHOPIFY_DOMAIN,
                body: raw,
                secret: relais.secrets.shopifyClientSecret,
              })
            : wooWebhookHeaders({ topic: WOO_TOPIC[topic], body: raw, secret: relais.secrets.wooWebhookSecret });
        const path = platform === 'shopify' ? '/webhooks/shopify' : `/webhooks/woocommerce/${WOO_SHOP_ID}`;
        const answer = await rawRequest(relais.web.url, path, Object.entries(headers), raw);
        expect(answer.status).toBeDefined();
        expect(answer.status).toBeLessThan(500);
        statuses.add(answer.status ?? 0);
      }),
      { numRuns: 60 },
    );
    expect(statuses.has(200)).toBe(true);

    const shopEvents = relais.web.runtime.queues.shopEvents;
    const counts = await waitFor(
      async () => {
        const c = await shopEvents.getJobCounts('waiting', 'active', 'prioritized', 'delayed', 'failed', 'completed');
        return (c.waiting ?? 0) + (c.active ?? 0) + (c.prioritized ?? 0) === 0 ? c : undefined;
      },
      { timeoutMs: 15_000, what: 'the intake jobs to finish' },
    );
    expect(counts.completed).toBeGreaterThan(0);
    expect({ failed: counts.failed, retrying: counts.delayed }).toEqual({ failed: 0, retrying: 0 });
    expect((await fetch(`${relais.web.url}/healthz`)).status).toBe(200);
  });
});
