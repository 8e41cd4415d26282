import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from './log.js';

/** A logger writing into an array of parsed lines. */
function capture() {
  const lines: Array<Record<string, unknown>> = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString('utf8')) as Record<string, unknown>);
      done();
    },
  });
  return { logger: createLogger({ destination }), lines };
}

describe('log lines', () => {
  it("never carry a secret or a customer's personal data, at whatever level of the logged object they sit", () => {
    const { logger, lines } = capture();
    const logged = {
      apiKey: 'pk_live_secret',
      shop: 'dakar-mode',
      request: { headers: { 'x-api-key': 'pk_live_secret', 'content-type': 'application/json' } },
      order: { name: '#1001', shipping_address: { address1: 'Villa 12' }, customer: { phone: '+221770000000' } },
      items: [{ sku: 'A1', note: 'call me on +221770000000' }],
      deep: { a: { b: { phone: '+221770000001', street: 'Rue 10' } } },
    };
    logger.child({ shop: 'dakar-mode', token: 'shpat_secret' }).warn(logged, 'something happened');
    const line = lines[0]!;
    expect(JSON.stringify(line)).not.toMatch(/pk_live_secret|shpat_secret|Villa 12|\+22177000000|Rue 10/);
    expect(line).toMatchObject({
      shop: 'dakar-mode',
      token: '[redacted]',
      apiKey: '[redacted]',
      request: { headers: { 'x-api-key': '[redacted]', 'content-type': 'application/json' } },
      order: { name: '#1001', shipping_address: '[redacted]', customer: '[redacted]' },
      items: [{ sku: 'A1', note: '[redacted]' }],
      deep: { a: { b: { phone: '[redacted]', street: '[redacted]' } } },
      msg: 'something happened',
    });
    // The caller's object is left as it was.
    expect(logged.apiKey).toBe('pk_live_secret');
    expect(logged.deep.a.b.phone).toBe('+221770000001');
  });

  it('keep an error logged whole (its type, message and stack) while censoring what it carries', () => {
    const { logger, lines } = capture();
    const err = Object.assign(new TypeError('the shop refused the token'), { token: 'shpat_secret', status: 401 });
    logger.error({ err }, 'write-back failed');
    expect(lines[0]).toMatchObject({
      err: { type: 'TypeError', message: 'the shop refused the token', token: '[redacted]', status: 401 },
    });
    expect((lines[0]!.err as { stack: string }).stack).toContain('TypeError: the shop refused the token');
    expect(err.token).toBe('shpat_secret');
  });
});
