/**
 * Unit tests of the dispatch client against small real HTTP servers on 127.0.0.1, for what the emulator cannot
 * easily show: both spellings, unknown fields, every status of the error table, timeouts, resets, and the key
 * staying out of every error and log line. The conformance suite (test/dispatch) drives the emulator.
 */
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { inspect } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../log.js';
import { DispatchClient, SANDBOX_KEY_MESSAGE } from './client.js';
import { DispatchConfigError, DispatchError, parseRetryAfter } from './errors.js';
import { rejectionOf } from '../../../test/support/rejection.js';

// ---------------------------------------------------------------------------------------------------
// A scripted HTTP server

interface RecordedRequest {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}
type Handler = (request: RecordedRequest, response: http.ServerResponse) => void;

interface TestServer {
  url: string;
  requests: RecordedRequest[];
  connections(): number;
  openSockets(): number;
  close(): Promise<void>;
}

const servers: TestServer[] = [];
const clients: DispatchClient[] = [];

afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function startServer(handler: Handler): Promise<TestServer> {
  const requests: RecordedRequest[] = [];
  const sockets = new Set<Socket>();
  let connections = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const recorded = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      requests.push(recorded);
      handler(recorded, res);
    });
  });
  server.on('connection', (socket: Socket) => {
    connections += 1;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const handle: TestServer = {
    url: `http://127.0.0.1:${port}`,
    requests,
    connections: () => connections,
    openSockets: () => sockets.size,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  servers.push(handle);
  return handle;
}

function send(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  res.writeHead(status, { 'content-type': typeof body === 'string' ? 'text/html' : 'application/json', ...headers });
  res.end(text);
}

function liveKey(): string {
  return `pk_live_${randomBytes(16).toString('hex')}`;
}

function makeClient(options: {
  baseUrl: string;
  trackingUrl?: string;
  apiKey?: string;
  timeoutMs?: number;
  logLines?: string[];
}): {
  client: DispatchClient;
  apiKey: string;
} {
  const apiKey = options.apiKey ?? liveKey();
  const logLines = options.logLines;
  const logger = logLines
    ? createLogger({ level: 'debug', destination: { write: (line: string) => void logLines.push(line) } })
    : undefined;
  const client = new DispatchClient({
    baseUrl: options.baseUrl,
    apiKey,
    ...(options.trackingUrl === undefined ? {} : { trackingUrl: options.trackingUrl }),
    ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
    ...(logger ? { logger } : {}),
  });
  clients.push(client);
  return { client, apiKey };
}

const failure = (promise: Promise<unknown>) => rejectionOf(promise, DispatchError);

const QUOTE_SPEC = {
  quote_id: 'qte_a1',
  expiresAt: '2030-01-01T00:00:00.000Z',
  total: 2500,
  currency: 'XOF',
  breakdown: { customer: 2500, courier: 2000, platform: 500 },
};
const SHIPMENT_SPEC = {
  shipment_id: 'shp_b2',
  external_order_id: 'dakar-mode:1001',
  quote_id: 'qte_a1',
  status: 'CREATED',
  publicTrackingUrl: 'http://track.example/t/ABCDEFGH23',
  tracking_code: 'ABCDEFGH23',
  orderAmountXof: 15000,
};
const QUOTE_REQUEST = {
  pickup: { city: 'Almadies', address: 'Route des Almadies' },
  dropoff: { city: 'Ngor', address: 'Village de Ngor' },
};

// ---------------------------------------------------------------------------------------------------

describe('keys', () => {
  it('refuses a pk_test_ key at construction, explaining the 403 SANDBOX_KEY_NOT_SUPPORTED and pointing to the emulator', async () => {
    const server = await startServer((_req, res) => send(res, 500, {}));
    const sandboxKey = `pk_test_${randomBytes(8).toString('hex')}`;
    let thrown: unknown;
    try {
      new DispatchClient({ baseUrl: server.url, apiKey: sandboxKey });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(DispatchConfigError);
    const message = (thrown as Error).message;
    expect(message).toBe(SANDBOX_KEY_MESSAGE);
    expect(message).toContain('403 SANDBOX_KEY_NOT_SUPPORTED');
    expect(message).toContain('no test keys');
    expect(message).toContain('relais emulate dispatch');
    expect(message).not.toContain(sandboxKey);
    expect(server.requests).toHaveLength(0);
  });

  it('refuses a missing key and a key with a trailing newline', () => {
    expect(() => new DispatchClient({ baseUrl: 'http://127.0.0.1:1', apiKey: '' })).toThrow(DispatchConfigError);
    const key = `${liveKey()}\n`;
    let message = '';
    try {
      new DispatchClient({ baseUrl: 'http://127.0.0.1:1', apiKey: key });
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toContain('line break');
    expect(message).not.toContain(key.trim());
  });

  it('warns, without writing the key, when a key does not look like a live key', () => {
    const lines: string[] = [];
    const { apiKey } = makeClient({
      baseUrl: 'http://127.0.0.1:1',
      apiKey: `sk_${randomBytes(8).toString('hex')}`,
      logLines: lines,
    });
    expect(lines.join('')).toContain('does not begin with pk_live_');
    expect(lines.join('')).not.toContain(apiKey);
  });

  it('refuses a base URL that carries credentials or is not http(s)', () => {
    expect(() => new DispatchClient({ baseUrl: 'http://user:pw@127.0.0.1:1', apiKey: liveKey() })).toThrow(
      DispatchConfigError,
    );
    expect(() => new DispatchClient({ baseUrl: 'ftp://127.0.0.1', apiKey: liveKey() })).toThrow(DispatchConfigError);
    expect(() => new DispatchClient({ baseUrl: 'not a url', apiKey: liveKey() })).toThrow(DispatchConfigError);
  });

  it('sends the key in X-Api-Key on authenticated calls', async () => {
    const server = await startServer((_req, res) => send(res, 200, QUOTE_SPEC));
    const { client, apiKey } = makeClient({ baseUrl: server.url });
    await client.getQuote('qte_a1');
    expect(server.requests[0]?.headers['x-api-key']).toBe(apiKey);
  });

  it('sends public operations to the tracking host, with no X-Api-Key', async () => {
    const gateway = await startServer((_req, res) => send(res, 500, { code: 'INTERNAL_ERROR' }));
    const tracking = await startServer((req, res) =>
      req.url.endsWith('/simulate-price')
        ? send(res, 200, { total: 2000, currency: 'XOF' })
        : send(res, 200, { tracking_code: 'ABCDEFGH23', status: 'READY', events: [] }),
    );
    const { client } = makeClient({ baseUrl: gateway.url, trackingUrl: tracking.url });
    await client.trackByCode('ABCDEFGH23');
    await client.simulatePrice({ pickup_city: 'Almadies', dropoff_city: 'Ngor' });
    expect(gateway.requests).toHaveLength(0);
    expect(tracking.requests.map((r) => `${r.method} ${r.url}`)).toEqual([
      'GET /v1/tracking/ABCDEFGH23',
      'POST /v1/tracking/simulate-price',
    ]);
    for (const request of tracking.requests) expect(request.headers['x-api-key']).toBeUndefined();
  });
});

describe('reading answers', () => {
  it('reads the spec spellings expiresAt and publicTrackingUrl', async () => {
    const server = await startServer((req, res) =>
      send(res, 201, req.url === '/v1/quotes' ? QUOTE_SPEC : SHIPMENT_SPEC),
    );
    const { client } = makeClient({ baseUrl: server.url });
    const quote = await client.createQuote(QUOTE_REQUEST);
    expect(quote).toMatchObject({ quoteId: 'qte_a1', expiresAt: '2030-01-01T00:00:00.000Z', total: 2500 });
    const shipment = await client.createShipment({ quote_id: 'qte_a1', external_order_id: 'dakar-mode:1001' });
    expect(shipment).toMatchObject({
      shipmentId: 'shp_b2',
      publicTrackingUrl: 'http://track.example/t/ABCDEFGH23',
      orderAmountXof: 15000,
    });
  });

  it('reads the snake_case spellings expires_at, public_tracking_url and order_amount_xof', async () => {
    const server = await startServer((req, res) =>
      req.url === '/v1/quotes'
        ? send(res, 201, { quote_id: 'qte_a1', expires_at: '2030-01-01T00:00:00.000Z', total: 2500 })
        : send(res, 201, {
            shipment_id: 'shp_b2',
            status: 'CREATED',
            public_tracking_url: 'http://track.example/t/ABCDEFGH23',
            order_amount_xof: 15000,
          }),
    );
    const { client } = makeClient({ baseUrl: server.url });
    expect(await client.createQuote(QUOTE_REQUEST)).toMatchObject({ expiresAt: '2030-01-01T00:00:00.000Z' });
    expect(await client.createShipment({ quote_id: 'qte_a1', external_order_id: 'x:1' })).toMatchObject({
      publicTrackingUrl: 'http://track.example/t/ABCDEFGH23',
      orderAmountXof: 15000,
    });
  });

  it('ignores fields it does not know', async () => {
    const server = await startServer((_req, res) =>
      send(res, 200, { ...SHIPMENT_SPEC, brand_new_field: { nested: [1, 2] }, courier_rating: 4.5 }),
    );
    const { client } = makeClient({ baseUrl: server.url });
    const shipment = await client.getShipment('shp_b2');
    expect(shipment.shipmentId).toBe('shp_b2');
    expect(shipment).not.toHaveProperty('brand_new_field');
  });

  it('turns a 2xx body that is not JSON into a non-retryable invalid_response error', async () => {
    const server = await startServer((_req, res) => send(res, 200, '<html>maintenance</html>'));
    const { client } = makeClient({ baseUrl: server.url });
    const error = await failure(client.getShipment('shp_b2'));
    expect(error).toMatchObject({ kind: 'invalid_response', retryable: false, status: 200, operation: 'getShipment' });
  });

  it('turns a 2xx JSON body that is not the resource into a non-retryable invalid_response error', async () => {
    const server = await startServer((_req, res) => send(res, 200, { status: 'CREATED', note: 'no id here' }));
    const { client } = makeClient({ baseUrl: server.url });
    const error = await failure(client.getShipment('shp_b2'));
    expect(error).toMatchObject({ kind: 'invalid_response', retryable: false });
    expect(error.message).toContain('shipment without shipment_id');
  });

  it('refuses an empty 2xx body as invalid_response', async () => {
    const server = await startServer((_req, res) => {
      res.writeHead(200);
      res.end();
    });
    const { client } = makeClient({ baseUrl: server.url });
    expect(await failure(client.getQuote('qte_a1'))).toMatchObject({ kind: 'invalid_response', retryable: false });
  });
});

describe('writing requests', () => {
  it('writes orderAmountXof as the spec spells it, next to quote_id and external_order_id, as JSON', async () => {
    const server = await startServer((_req, res) => send(res, 201, SHIPMENT_SPEC));
    const { client } = makeClient({ baseUrl: server.url });
    await client.createShipment({ quote_id: 'qte_a1', external_order_id: 'dakar-mode:1001', orderAmountXof: 15000 });
    const request = server.requests[0];
    expect(request?.headers['content-type']).toBe('application/json');
    expect(JSON.parse(request?.body ?? '')).toEqual({
      quote_id: 'qte_a1',
      external_order_id: 'dakar-mode:1001',
      orderAmountXof: 15000,
    });
  });

  it('refuses a fraction of a franc before any call', async () => {
    const server = await startServer((_req, res) => send(res, 201, SHIPMENT_SPEC));
    const { client } = makeClient({ baseUrl: server.url });
    expect(() =>
      client.createShipment({ quote_id: 'qte_a1', external_order_id: 'x:1', orderAmountXof: 150.5 }),
    ).toThrow(RangeError);
    expect(server.requests).toHaveLength(0);
  });

  it('calls every operation on its /v1 path with its method', async () => {
    const server = await startServer((req, res) => {
      if (req.url.startsWith('/v1/quotes')) return send(res, 200, QUOTE_SPEC);
      if (req.url.endsWith('/disputes')) return send(res, 200, { data: [] });
      if (req.url.endsWith('/open-dispute'))
        return send(res, 201, { claim_id: 'clm_1', reason: 'damaged', status: 'OPEN' });
      if (req.url.startsWith('/v1/shipments?') || (req.url === '/v1/shipments' && req.method === 'GET'))
        return send(res, 200, { shipments: [] });
      if (req.url === '/v1/tracking/simulate-price') return send(res, 200, { total: 2000 });
      if (req.url.startsWith('/v1/tracking/')) return send(res, 200, { status: 'READY' });
      return send(res, 200, SHIPMENT_SPEC);
    });
    const { client } = makeClient({ baseUrl: server.url });
    await client.createQuote(QUOTE_REQUEST);
    await client.getQuote('qte_a1');
    await client.createShipment({ quote_id: 'qte_a1', external_order_id: 'dakar-mode:1001' });
    await client.getShipment('shp_b2');
    await client.listShipments({ status: 'DELIVERED', limit: 50, cursor: 'c1' });
    await client.getShipmentByExternalOrder('dakar-mode:1001');
    await client.markReady('shp_b2', 'relais');
    await client.cancelShipment('shp_b2', { reason: 'customer cancelled', by: 'relais' });
    await client.openDispute('shp_b2', { reason: 'damaged', description: 'box crushed', claimant_id: 'usr_1' });
    await client.listShipmentDisputes('shp_b2');
    await client.trackByCode('ABCDEFGH23');
    await client.simulatePrice({ pickup_city: 'Almadies', dropoff_city: 'Ngor' });
    expect(server.requests.map((r) => `${r.method} ${r.url}`)).toEqual([
      'POST /v1/quotes',
      'GET /v1/quotes/qte_a1',
      'POST /v1/shipments',
      'GET /v1/shipments/shp_b2',
      'GET /v1/shipments?status=DELIVERED&cursor=c1&limit=50',
      'GET /v1/shipments/by-external-order/dakar-mode%3A1001',
      'POST /v1/shipments/shp_b2/mark-ready',
      'POST /v1/shipments/shp_b2/cancel',
      'POST /v1/shipments/shp_b2/open-dispute',
      'GET /v1/shipments/shp_b2/disputes',
      'GET /v1/tracking/ABCDEFGH23',
      'POST /v1/tracking/simulate-price',
    ]);
    expect(JSON.parse(server.requests[6]?.body ?? '')).toEqual({ by: 'relais' });
    expect(JSON.parse(server.requests[7]?.body ?? '')).toEqual({ reason: 'customer cancelled', by: 'relais' });
  });

  it('keeps a path prefix of the base URL', async () => {
    const server = await startServer((_req, res) => send(res, 200, QUOTE_SPEC));
    const { client } = makeClient({ baseUrl: `${server.url}/gateway/` });
    await client.getQuote('qte_a1');
    expect(server.requests[0]?.url).toBe('/gateway/v1/quotes/qte_a1');
  });

  it('refuses programmer errors before any call: empty ids, page sizes outside 1..100', async () => {
    const server = await startServer((_req, res) => send(res, 200, { shipments: [] }));
    const { client } = makeClient({ baseUrl: server.url });
    expect(() => client.getShipment('')).toThrow(TypeError);
    expect(() => client.markReady('shp_1', ' ')).toThrow(TypeError);
    expect(() => client.listShipments({ limit: 0 })).toThrow(RangeError);
    expect(() => client.listShipments({ limit: 101 })).toThrow(RangeError);
    expect(() => client.listShipments({ limit: 2.5 })).toThrow(RangeError);
    await expect(client.iterateShipments({ pageSize: 500 })[Symbol.asyncIterator]().next()).rejects.toThrow(RangeError);
    expect(server.requests).toHaveLength(0);
  });
});

describe('error mapping', () => {
  const table: { status: number; code: string; retryable: boolean }[] = [
    { status: 500, code: 'INTERNAL_ERROR', retryable: true },
    { status: 502, code: 'BAD_GATEWAY', retryable: true },
    { status: 503, code: 'UNAVAILABLE', retryable: true },
    { status: 429, code: 'RATE_LIMITED', retryable: true },
    { status: 400, code: 'VALIDATION_ERROR', retryable: false },
    { status: 401, code: 'UNAUTHORIZED', retryable: false },
    { status: 403, code: 'SANDBOX_KEY_NOT_SUPPORTED', retryable: false },
    { status: 404, code: 'QUOTE_NOT_FOUND', retryable: false },
    { status: 409, code: 'QUOTE_EXPIRED', retryable: false },
    { status: 422, code: 'UNPROCESSABLE', retryable: false },
  ];
  it.each(table)(
    'HTTP $status $code is an http error with retryable=$retryable',
    async ({ status, code, retryable }) => {
      const server = await startServer((_req, res) => send(res, status, { code, message: 'told by the service' }));
      const { client } = makeClient({ baseUrl: server.url });
      const error = await failure(client.getQuote('qte_a1'));
      expect(error).toMatchObject({ kind: 'http', status, code, retryable, operation: 'getQuote' });
      expect(error.message).toContain(`HTTP ${status} ${code}: told by the service`);
    },
  );

  it('reads Retry-After in seconds', async () => {
    const server = await startServer((_req, res) => send(res, 429, { code: 'RATE_LIMITED' }, { 'retry-after': '7' }));
    const { client } = makeClient({ baseUrl: server.url });
    expect(await failure(client.getQuote('qte_a1'))).toMatchObject({ retryable: true, retryAfterMs: 7000 });
  });

  it('reads Retry-After as an HTTP-date', async () => {
    const at = new Date(Date.now() + 30_000).toUTCString();
    const server = await startServer((_req, res) => send(res, 503, { code: 'UNAVAILABLE' }, { 'retry-after': at }));
    const { client } = makeClient({ baseUrl: server.url });
    const error = await failure(client.getQuote('qte_a1'));
    expect(error.retryable).toBe(true);
    expect(error.retryAfterMs).toBeGreaterThan(25_000);
    expect(error.retryAfterMs).toBeLessThanOrEqual(30_000);
  });

  it('parses Retry-After: a past date waits 0, garbage is ignored', () => {
    expect(parseRetryAfter('Wed, 21 Oct 2015 07:28:00 GMT')).toBe(0);
    expect(parseRetryAfter('soon')).toBeUndefined();
    expect(parseRetryAfter(undefined)).toBeUndefined();
    expect(parseRetryAfter('0')).toBe(0);
  });

  it('reads the alternative error body shapes and survives an HTML error page', async () => {
    let reply = 0;
    const server = await startServer((_req, res) => {
      reply += 1;
      if (reply === 1) return send(res, 409, { error: { code: 'QUOTE_EXPIRED', message: 'too late' } });
      if (reply === 2) return send(res, 404, { error: 'SHIPMENT_NOT_FOUND' });
      return send(res, 502, '<html>Bad gateway</html>');
    });
    const { client } = makeClient({ baseUrl: server.url });
    expect(await failure(client.getQuote('qte_a1'))).toMatchObject({
      status: 409,
      code: 'QUOTE_EXPIRED',
      retryable: false,
    });
    expect(await failure(client.getQuote('qte_a1'))).toMatchObject({ status: 404, code: 'SHIPMENT_NOT_FOUND' });
    const html = await failure(client.getQuote('qte_a1'));
    expect(html).toMatchObject({ kind: 'http', status: 502, retryable: true });
    expect(html.code).toBeUndefined();
  });

  it('reports a call with no answer in time as a retryable timeout', async () => {
    const server = await startServer(() => {
      /* never answers */
    });
    const { client } = makeClient({ baseUrl: server.url, timeoutMs: 5_000 });
    const started = Date.now();
    const error = await failure(client.getShipment('shp_b2', { timeoutMs: 150 }));
    expect(error).toMatchObject({ kind: 'timeout', retryable: true, operation: 'getShipment' });
    expect(Date.now() - started).toBeLessThan(3_000);
  });

  it('applies the client-wide timeout when the call sets none', async () => {
    const server = await startServer(() => {
      /* never answers */
    });
    const { client } = makeClient({ baseUrl: server.url, timeoutMs: 150 });
    expect(await failure(client.getQuote('qte_a1'))).toMatchObject({ kind: 'timeout', retryable: true });
  });

  it('reports a reset connection as a retryable network error', async () => {
    const server = await startServer((_req, res) => res.socket?.destroy());
    const { client } = makeClient({ baseUrl: server.url });
    const error = await failure(client.createShipment({ quote_id: 'qte_a1', external_order_id: 'x:1' }));
    expect(error).toMatchObject({ kind: 'network', retryable: true, operation: 'createShipment' });
  });

  it('reports a connection dropped in the middle of the body as a retryable network error', async () => {
    const server = await startServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '500' });
      res.write('{"shipment_id":"shp_');
      setTimeout(() => res.socket?.destroy(), 20);
    });
    const { client } = makeClient({ baseUrl: server.url });
    expect(await failure(client.getShipment('shp_b2'))).toMatchObject({ kind: 'network', retryable: true });
  });

  it('reports a refused connection as a retryable network error', async () => {
    const server = await startServer((_req, res) => send(res, 200, {}));
    const url = server.url;
    await server.close();
    const { client } = makeClient({ baseUrl: url });
    const error = await failure(client.getQuote('qte_a1'));
    expect(error).toMatchObject({ kind: 'network', retryable: true });
    expect(error.message).toContain('ECONNREFUSED');
  });

  it("reports the caller's abort as a retryable network error", async () => {
    const server = await startServer(() => {
      /* never answers */
    });
    const { client } = makeClient({ baseUrl: server.url });
    const controller = new AbortController();
    const pending = failure(client.getQuote('qte_a1', { signal: controller.signal }));
    setTimeout(() => controller.abort(), 50);
    expect(await pending).toMatchObject({ kind: 'network', retryable: true });
    expect(await failure(client.getQuote('qte_a1', { signal: controller.signal }))).toMatchObject({ kind: 'network' });
  });
});

describe('lookups and pages', () => {
  it('getShipmentByExternalOrder returns undefined when the shipment is not found', async () => {
    const server = await startServer((_req, res) =>
      send(res, 404, { code: 'SHIPMENT_NOT_FOUND', message: 'no such shipment' }),
    );
    const { client } = makeClient({ baseUrl: server.url });
    expect(await client.getShipmentByExternalOrder('dakar-mode:404')).toBeUndefined();
  });

  it('getShipmentByExternalOrder throws on a 404 for an unknown route, so a wrong base URL never reads as "no shipment"', async () => {
    const server = await startServer((_req, res) => send(res, 404, { code: 'NOT_FOUND', message: 'no route' }));
    const { client } = makeClient({ baseUrl: server.url });
    expect(await failure(client.getShipmentByExternalOrder('dakar-mode:1'))).toMatchObject({
      status: 404,
      code: 'NOT_FOUND',
    });
  });

  it('getShipmentByExternalOrder throws a retryable error on a 404 whose code says something else than "no such shipment" or that the profile does not know', async () => {
    for (const code of ['INVALID_STATE', 'SOMETHING_NEW']) {
      const server = await startServer((_req, res) => send(res, 404, { code, message: 'not here' }));
      const { client } = makeClient({ baseUrl: server.url });
      expect(await failure(client.getShipmentByExternalOrder('dakar-mode:1'))).toMatchObject({
        status: 404,
        code,
        retryable: true,
        meaning: undefined,
      });
      expect(server.requests.map((r) => r.url)).toEqual(['/v1/shipments/by-external-order/dakar-mode%3A1']);
    }
  });

  it('getShipmentByExternalOrder confirms a 404 without a code with listShipments: the listed shipment is answered, and "none" only when the listing ends without it', async () => {
    const pages: Record<string, unknown> = {
      first: {
        shipments: [{ shipment_id: 'shp_1', external_order_id: 'dakar-mode:9', status: 'READY' }],
        next_cursor: 'p2',
      },
      p2: { shipments: [{ ...SHIPMENT_SPEC, shipment_id: 'shp_2' }] },
    };
    const server = await startServer((req, res) => {
      const url = new URL(req.url, 'http://x');
      if (url.pathname.startsWith('/v1/shipments/by-external-order/')) return send(res, 404, '');
      send(res, 200, pages[url.searchParams.get('cursor') ?? 'first']);
    });
    const { client } = makeClient({ baseUrl: server.url });
    expect((await client.getShipmentByExternalOrder('dakar-mode:1001'))?.shipmentId).toBe('shp_2');
    expect(server.requests.map((r) => r.url).slice(1)).toEqual([
      '/v1/shipments?limit=100',
      '/v1/shipments?cursor=p2&limit=100',
    ]);
    expect(await client.getShipmentByExternalOrder('dakar-mode:1002')).toBeUndefined();
  });

  it('getShipmentByExternalOrder throws a retryable error on a 404 without a code when three pages of shipments do not settle it, never answering "none"', async () => {
    let page = 0;
    const server = await startServer((req, res) => {
      if (req.url.startsWith('/v1/shipments/by-external-order/')) return send(res, 404, '');
      page += 1;
      send(res, 200, {
        shipments: [{ shipment_id: `shp_${page}`, external_order_id: 'dakar-mode:9', status: 'READY' }],
        next_cursor: `p${page + 1}`,
      });
    });
    const { client } = makeClient({ baseUrl: server.url });
    expect(await failure(client.getShipmentByExternalOrder('dakar-mode:1001'))).toMatchObject({
      status: 404,
      retryable: true,
      operation: 'getShipmentByExternalOrder',
    });
    expect(page).toBe(3);
  });

  it('getShipmentByExternalOrder throws on a 5xx instead of answering "none"', async () => {
    const server = await startServer((_req, res) => send(res, 503, { code: 'UNAVAILABLE' }));
    const { client } = makeClient({ baseUrl: server.url });
    expect(await failure(client.getShipmentByExternalOrder('dakar-mode:1'))).toMatchObject({
      status: 503,
      retryable: true,
    });
  });

  it('iterateShipments follows next_cursor until the last page', async () => {
    const pages: Record<string, unknown> = {
      first: {
        shipments: [
          { shipment_id: 'shp_1', status: 'READY' },
          { shipment_id: 'shp_2', status: 'READY' },
        ],
        next_cursor: 'p2',
      },
      p2: { shipments: [{ shipment_id: 'shp_3', status: 'READY' }], nextCursor: 'p3' },
      p3: { shipments: [{ shipment_id: 'shp_4', status: 'READY' }], next_cursor: null },
    };
    const server = await startServer((req, res) => {
      const cursor = new URL(req.url, 'http://x').searchParams.get('cursor') ?? 'first';
      send(res, 200, pages[cursor]);
    });
    const { client } = makeClient({ baseUrl: server.url });
    const ids: string[] = [];
    for await (const shipment of client.iterateShipments({ status: 'READY', pageSize: 2 }))
      ids.push(shipment.shipmentId);
    expect(ids).toEqual(['shp_1', 'shp_2', 'shp_3', 'shp_4']);
    expect(server.requests.map((r) => r.url)).toEqual([
      '/v1/shipments?status=READY&limit=2',
      '/v1/shipments?status=READY&cursor=p2&limit=2',
      '/v1/shipments?status=READY&cursor=p3&limit=2',
    ]);
  });

  it('iterateShipments stops with invalid_response when the service repeats a cursor', async () => {
    const server = await startServer((_req, res) =>
      send(res, 200, { shipments: [{ shipment_id: 'shp_1', status: 'READY' }], next_cursor: 'same' }),
    );
    const { client } = makeClient({ baseUrl: server.url });
    const seen: string[] = [];
    const run = async (): Promise<void> => {
      for await (const shipment of client.iterateShipments()) seen.push(shipment.shipmentId);
    };
    await expect(run()).rejects.toMatchObject({ kind: 'invalid_response', retryable: false });
    expect(seen.length).toBe(2);
  });
});

describe('connections', () => {
  it('keeps the connection alive between calls and closes it on close()', async () => {
    const server = await startServer((_req, res) => send(res, 200, QUOTE_SPEC));
    const { client } = makeClient({ baseUrl: server.url });
    await client.getQuote('qte_a1');
    await client.getQuote('qte_a1');
    await client.getQuote('qte_a1');
    expect(server.connections()).toBe(1);
    await client.close();
    for (let i = 0; i < 50 && server.openSockets() > 0; i += 1) await new Promise((r) => setTimeout(r, 10));
    expect(server.openSockets()).toBe(0);
    await expect(client.getQuote('qte_a1')).rejects.toThrow('the client is closed');
    expect(server.requests).toHaveLength(3);
  });
});

describe('the key stays secret', () => {
  it('never appears in errors, their JSON, their stack, nor in any log line', async () => {
    const lines: string[] = [];
    let reply = 0;
    const server = await startServer((req, res) => {
      reply += 1;
      const echoed = String(req.headers['x-api-key']);
      if (reply === 1) return send(res, 401, { code: 'UNAUTHORIZED', message: `unknown key ${echoed}` });
      if (reply === 2) return send(res, 500, { code: 'INTERNAL_ERROR', message: `crash while handling ${echoed}` });
      if (reply === 3) return res.socket?.destroy();
      if (reply === 4) return send(res, 200, { unexpected: echoed });
      return undefined; // 5: never answers
    });
    const { client, apiKey } = makeClient({ baseUrl: server.url, logLines: lines });
    const errors = [
      await failure(client.getQuote('qte_a1')),
      await failure(client.getQuote('qte_a1')),
      await failure(client.getQuote('qte_a1')),
      await failure(client.getQuote('qte_a1')),
      await failure(client.getQuote('qte_a1', { timeoutMs: 100 })),
    ];
    expect(errors.map((e) => e.kind)).toEqual(['http', 'http', 'network', 'invalid_response', 'timeout']);
    expect(errors[0]?.message).toContain('[redacted]');
    // What a job would do with such an error: log it whole.
    const logger = createLogger({ level: 'debug', destination: { write: (line: string) => void lines.push(line) } });
    for (const error of errors) {
      logger.error({ err: error }, 'dispatch call failed');
      for (const text of [
        String(error),
        error.message,
        error.stack ?? '',
        JSON.stringify(error),
        inspect(error, { depth: 5 }),
      ]) {
        expect(text).not.toContain(apiKey);
      }
    }
    expect(lines.some((line) => line.includes('"operation":"getQuote"') && line.includes('"status":401'))).toBe(true);
    for (const line of lines) expect(line).not.toContain(apiKey);
  });

  it('never appears in JSON.stringify(client), String(client) or inspect(client)', () => {
    const { client, apiKey } = makeClient({ baseUrl: 'http://127.0.0.1:1' });
    expect(JSON.stringify(client)).not.toContain(apiKey);
    expect(JSON.stringify({ client })).toContain('127.0.0.1');
    expect(String(client)).not.toContain(apiKey);
    expect(inspect(client, { depth: 10, showHidden: true })).not.toContain(apiKey);
  });
});
