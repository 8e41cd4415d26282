import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  randomSecret,
  signWoo,
  wooOrderPayload,
  wooPingBody,
  wooWebhookHeaders,
} from '../../../test/support/factories.js';
import { asNodeHeaders, itRefusesForgedDeliveries } from '../../../test/support/webhook-verification.js';
import { VERIFICATION_FAILURE_STATUS } from '../../shops/platforms/common.js';
import { verifyWooWebhook, wooSigningKey } from './verify.js';

const FORM = 'application/x-www-form-urlencoded';

function delivery(secret = randomSecret(), topic = 'order.created') {
  const rawBody = Buffer.from(JSON.stringify(wooOrderPayload()));
  const headers = wooWebhookHeaders({
    topic,
    body: rawBody,
    secret,
    webhookId: '12',
    deliveryId: '5d41402abc4b2a76b9719d911017c592',
    source: 'https://boutique.example.ci/',
  });
  return { rawBody, headers, secret, contentType: 'application/json' };
}

describe('verifyWooWebhook: deliveries', () => {
  it('accepts a delivery signed with the webhook secret and reports its topic, resource, event and ids', () => {
    const { rawBody, headers, secret, contentType } = delivery();
    expect(verifyWooWebhook({ rawBody, headers, secret, contentType })).toEqual({
      ok: true,
      kind: 'delivery',
      topic: 'order.created',
      resource: 'order',
      event: 'created',
      webhookId: '12',
      deliveryId: '5d41402abc4b2a76b9719d911017c592',
      source: 'https://boutique.example.ci/',
    });
  });

  it('reads header names in any case, as Node lower-cases them', () => {
    const { rawBody, headers, secret } = delivery();
    expect(verifyWooWebhook({ rawBody, headers: asNodeHeaders(headers), secret })).toMatchObject({
      ok: true,
      kind: 'delivery',
      topic: 'order.created',
    });
  });

  itRefusesForgedDeliveries({
    verify: verifyWooWebhook,
    delivery: () => delivery(),
    tamper: ['"total":"20000"', '"total":"2000"'],
    refusal: 'invalid_signature',
  });

  it('refuses a tampered signature, even one differing in a single character', () => {
    const { rawBody, headers, secret } = delivery();
    const signature = headers['X-WC-Webhook-Signature'] ?? '';
    const flipped = `${signature[0] === 'A' ? 'B' : 'A'}${signature.slice(1)}`;
    expect(verifyWooWebhook({ rawBody, headers: { ...headers, 'X-WC-Webhook-Signature': flipped }, secret })).toEqual({
      ok: false,
      reason: 'invalid_signature',
    });
    expect(
      verifyWooWebhook({ rawBody, headers: { ...headers, 'X-WC-Webhook-Signature': signature.slice(0, 20) }, secret }),
    ).toEqual({ ok: false, reason: 'invalid_signature' });
  });

  it('lists the missing signature header of an otherwise complete delivery, with 400', () => {
    const { rawBody, headers, secret } = delivery();
    const { 'X-WC-Webhook-Signature': _signature, ...unsigned } = headers;
    const result = verifyWooWebhook({ rawBody, headers: unsigned, secret });
    expect(result).toEqual({ ok: false, reason: 'missing_headers', missing: ['X-WC-Webhook-Signature'] });
    expect(VERIFICATION_FAILURE_STATUS[result.ok ? 'invalid_signature' : result.reason]).toBe(400);
  });

  it('refuses an unsigned JSON body without any WooCommerce header as missing headers', () => {
    const rawBody = Buffer.from(JSON.stringify(wooOrderPayload()));
    expect(
      verifyWooWebhook({ rawBody, headers: { 'content-type': 'application/json' }, secret: randomSecret() }),
    ).toEqual({ ok: false, reason: 'missing_headers', missing: ['X-WC-Webhook-Signature', 'X-WC-Webhook-Topic'] });
  });

  it('derives resource and event from the topic when those headers are absent', () => {
    const { rawBody, headers, secret } = delivery(randomSecret(), 'order.updated');
    const { 'X-WC-Webhook-Resource': _r, 'X-WC-Webhook-Event': _e, ...rest } = headers;
    expect(verifyWooWebhook({ rawBody, headers: rest, secret })).toMatchObject({
      ok: true,
      resource: 'order',
      event: 'updated',
    });
  });

  it('verifies a secret containing HTML entities the way WooCommerce signs it (wp_specialchars_decode)', () => {
    const stored = `${randomSecret()}&amp;&#039;&quot;&lt;&gt;&#38;&#x27;&amp;lt;`;
    const decoded = `${stored.slice(0, 64)}&'"<>&'&lt;`;
    expect(wooSigningKey(stored)).toBe(decoded);
    const rawBody = Buffer.from(JSON.stringify(wooOrderPayload()));
    const headers = {
      ...wooWebhookHeaders({ topic: 'order.created', body: rawBody, secret: 'unused' }),
      'X-WC-Webhook-Signature': createHmac('sha256', decoded).update(rawBody).digest('base64'),
    };
    expect(verifyWooWebhook({ rawBody, headers, secret: stored })).toMatchObject({ ok: true, kind: 'delivery' });
  });
});

describe('verifyWooWebhook: the creation ping', () => {
  it('accepts the unsigned ping WooCommerce sends when a webhook is created', () => {
    const fixture = readFileSync(new URL('../../../test/fixtures/woocommerce/webhook-ping.body.txt', import.meta.url));
    expect(
      verifyWooWebhook({
        rawBody: fixture,
        headers: { 'content-type': FORM },
        secret: randomSecret(),
        contentType: FORM,
      }),
    ).toEqual({ ok: true, kind: 'ping', webhookId: '123' });
  });

  it('accepts a ping whose content type was dropped, and one with a charset parameter', () => {
    const rawBody = Buffer.from(wooPingBody(45));
    expect(verifyWooWebhook({ rawBody, headers: {}, secret: randomSecret() })).toEqual({
      ok: true,
      kind: 'ping',
      webhookId: '45',
    });
    expect(
      verifyWooWebhook({ rawBody, headers: {}, secret: randomSecret(), contentType: `${FORM}; charset=UTF-8` }),
    ).toEqual({ ok: true, kind: 'ping', webhookId: '45' });
  });

  it('refuses ping-shaped bodies that are not a ping', () => {
    const secret = randomSecret();
    for (const body of ['webhook_id=abc', 'webhook_id=0', 'webhook_id=', 'webhook_id=12&x=1']) {
      expect(verifyWooWebhook({ rawBody: Buffer.from(body), headers: {}, secret, contentType: FORM })).toEqual({
        ok: false,
        reason: 'malformed_ping',
      });
    }
    expect(
      verifyWooWebhook({ rawBody: Buffer.from(wooPingBody(7)), headers: {}, secret, contentType: 'application/json' }),
    ).toEqual({ ok: false, reason: 'malformed_ping' });
  });

  it('does not let a body shaped like a ping skip the signature when WooCommerce headers are present', () => {
    const secret = randomSecret();
    const rawBody = Buffer.from(wooPingBody(7));
    const headers = wooWebhookHeaders({ topic: 'order.created', body: 'something else', secret });
    expect(verifyWooWebhook({ rawBody, headers, secret, contentType: FORM })).toEqual({
      ok: false,
      reason: 'invalid_signature',
    });
    const signed = { ...headers, 'X-WC-Webhook-Signature': signWoo(rawBody, secret) };
    expect(verifyWooWebhook({ rawBody, headers: signed, secret, contentType: FORM })).toMatchObject({
      ok: true,
      kind: 'delivery',
    });
  });
});
