/**
 * The dashboard's building blocks on their own: escaping, link targets, signed sessions and flashes, and the
 * cash-on-delivery figures.
 */
import { describe, expect, it } from 'vitest';
import { KNOWN_BROWSER_TTL_MS, secretsEqual, SessionSigner } from '../../src/dashboard/auth.js';
import { codFigures } from '../../src/dashboard/use-cases/order-figures.js';
import { escapeHtml, formatXof, html, safeHref } from '../../src/dashboard/html.js';
import { moneyBody } from '../../src/dashboard/money-page.js';
import type { ReconciliationSummary } from '../../src/dashboard/ports.js';
import type { OrderRecord, OrderState } from '../../src/ledger/order-ledger.js';
import type { PaymentFamily, StoreOrder } from '../../src/domain/order.js';
import type { Xof } from '../../src/domain/money.js';

const TOKEN = 'a-dashboard-token-of-some-length';
const NOW = Date.parse('2026-05-04T10:00:00Z');

describe('escaping', () => {
  it('turns every character that could open markup or leave an attribute into an entity', () => {
    expect(escapeHtml(`<a href="x" onclick='y'>&\`</a>`)).toBe(
      '&lt;a href=&quot;x&quot; onclick=&#39;y&#39;&gt;&amp;&#96;&lt;/a&gt;',
    );
  });

  it('escapes every interpolated value, keeps fragments built by the template itself, and joins lists', () => {
    const name = '<img src=x onerror=alert(1)>';
    const out = html`<p title="${name}">${name}${html`<b>${'&'}</b>`}${[1, '<', html`<i></i>`]}${undefined}${null}${false}</p>`;
    expect(out.value).toBe(
      '<p title="&lt;img src=x onerror=alert(1)&gt;">&lt;img src=x onerror=alert(1)&gt;<b>&amp;</b>1&lt;<i></i></p>',
    );
  });

  it('lets only http(s) links and same-site paths through as link targets', () => {
    expect(safeHref('javascript:alert(1)')).toBe('#');
    expect(safeHref('data:text/html,<script>')).toBe('#');
    expect(safeHref('//evil.example/x')).toBe('#');
    expect(safeHref(undefined)).toBe('#');
    expect(safeHref('/dashboard/held')).toBe('/dashboard/held');
    expect(safeHref('https://track.example/t/ABC')).toBe('https://track.example/t/ABC');
  });

  it('writes francs grouped by thousands with no decimals', () => {
    expect(formatXof(15000)).toBe('15\u202f000\u00a0F');
    expect(formatXof(1_234_567)).toBe('1\u202f234\u202f567\u00a0F');
    expect(formatXof(0)).toBe('0\u00a0F');
    expect(formatXof(undefined)).toBe('—');
  });
});

describe('sessions', () => {
  const signer = new SessionSigner(TOKEN);

  it('accepts its own session until it expires, and never carries the token', () => {
    const { session, cookieValue } = signer.issue(NOW, 60_000);
    expect(cookieValue).not.toContain(TOKEN);
    expect(signer.verify(cookieValue, NOW + 59_999)).toEqual(session);
    expect(signer.verify(cookieValue, NOW + 60_000)).toBeUndefined();
  });

  it('refuses a session with a changed expiry, a changed id, or signed with another token', () => {
    const { cookieValue } = signer.issue(NOW, 60_000);
    const [id, expires, signature] = cookieValue.split('.') as [string, string, string];
    expect(signer.verify(`${id}.${String(Number(expires) + 3_600_000)}.${signature}`, NOW)).toBeUndefined();
    expect(signer.verify(`${id.slice(1)}A.${expires}.${signature}`, NOW)).toBeUndefined();
    expect(new SessionSigner(`${TOKEN}-rotated`).verify(cookieValue, NOW)).toBeUndefined();
    expect(signer.verify('garbage', NOW)).toBeUndefined();
    expect(signer.verify(undefined, NOW)).toBeUndefined();
  });

  it('binds the CSRF token to one session', () => {
    const a = signer.issue(NOW, 60_000).session;
    const b = signer.issue(NOW, 60_000).session;
    expect(signer.csrfValid(a, signer.csrfToken(a))).toBe(true);
    expect(signer.csrfValid(a, signer.csrfToken(b))).toBe(false);
    expect(signer.csrfValid(a, '')).toBe(false);
    expect(signer.csrfValid(a, undefined)).toBe(false);
  });

  it('recognises its own known-browser cookie for 30 days, and takes neither a session cookie for one nor the reverse', () => {
    const known = signer.knownBrowserCookie(NOW);
    expect(known).not.toContain(TOKEN);
    expect(signer.knownBrowser(known, NOW + KNOWN_BROWSER_TTL_MS - 1)).toMatch(/^[A-Za-z0-9_-]{24}$/);
    expect(signer.knownBrowser(known, NOW + KNOWN_BROWSER_TTL_MS)).toBeUndefined();
    expect(KNOWN_BROWSER_TTL_MS).toBe(30 * 86_400_000);
    expect(signer.knownBrowser(signer.issue(NOW, 60_000).cookieValue, NOW)).toBeUndefined();
    expect(signer.verify(known, NOW)).toBeUndefined();
    expect(new SessionSigner(`${TOKEN}-rotated`).knownBrowser(known, NOW)).toBeUndefined();
    expect(signer.knownBrowser('garbage', NOW)).toBeUndefined();
  });

  it('shows only flash messages it signed itself, for a minute', () => {
    const cookie = signer.flashCookie({ kind: 'ok', message: 'Alias "Pyrotechnie" → Sacré Coeur added' }, NOW);
    expect(signer.readFlash(cookie, NOW + 1_000)).toEqual({
      kind: 'ok',
      message: 'Alias "Pyrotechnie" → Sacré Coeur added',
    });
    expect(signer.readFlash(cookie, NOW + 61_000)).toBeUndefined();
    const [, expires, signature] = cookie.split('.') as [string, string, string];
    const forged = `${Buffer.from(JSON.stringify({ kind: 'ok', message: 'Call +221 00 00 00 00 to unlock your account' })).toString('base64url')}.${expires}.${signature}`;
    expect(signer.readFlash(forged, NOW)).toBeUndefined();
  });

  it('compares secrets of different lengths without throwing', () => {
    expect(secretsEqual('short', 'a much longer value')).toBe(false);
    expect(secretsEqual(TOKEN, TOKEN)).toBe(true);
  });
});

describe('cash-on-delivery figures', () => {
  let n = 0;
  function record(
    state: OrderState,
    options: { amount: number; family?: PaymentFamily; received: string; changed: string; shipped?: boolean },
  ): OrderRecord {
    n += 1;
    const family = options.family ?? 'cash_on_delivery';
    return {
      meta: {
        externalOrderId: `shop:${n}`,
        shopId: 'shop',
        platform: 'shopify',
        orderId: String(n),
        orderName: `#${n}`,
        firstSeenAt: options.received,
        generation: 0,
      },
      state,
      stateChangedAt: options.changed,
      order: {
        paymentFamily: family,
        outstanding: (family === 'prepaid' ? 0 : options.amount) as Xof,
        total: options.amount as Xof,
      } as StoreOrder,
      ...(options.shipped
        ? {
            shipment: {
              shipmentId: `shp_${n}`,
              status: 'READY',
              createdAt: options.received,
              ...(family === 'prepaid' ? {} : { orderAmountXof: options.amount }),
            },
          }
        : {}),
    };
  }

  it('counts delivered orders as collected on the delivery day, live parcels as expected, held ones as not dispatched, and prepaid ones not at all', () => {
    const figures = codFigures([
      record('delivered', {
        amount: 15_000,
        received: '2026-05-01T09:00:00Z',
        changed: '2026-05-02T16:00:00Z',
        shipped: true,
      }),
      record('delivered', {
        amount: 5_000,
        received: '2026-05-02T09:00:00Z',
        changed: '2026-05-02T18:00:00Z',
        shipped: true,
      }),
      record('in_delivery', {
        amount: 7_000,
        received: '2026-05-02T10:00:00Z',
        changed: '2026-05-02T12:00:00Z',
        shipped: true,
      }),
      record('held', { amount: 9_000, received: '2026-05-03T08:00:00Z', changed: '2026-05-03T08:00:01Z' }),
      record('returned', {
        amount: 4_000,
        received: '2026-05-01T08:00:00Z',
        changed: '2026-05-03T17:00:00Z',
        shipped: true,
      }),
      record('delivered', {
        amount: 30_000,
        family: 'prepaid',
        received: '2026-05-01T08:00:00Z',
        changed: '2026-05-02T08:00:00Z',
        shipped: true,
      }),
    ]);
    expect(figures.days.map((d) => d.day)).toEqual(['2026-05-03', '2026-05-02']);
    const [may3, may2] = figures.days;
    expect(may2).toMatchObject({ collected: { orders: 2, xof: 20_000 }, expected: { orders: 1, xof: 7_000 } });
    expect(may3).toMatchObject({ notDispatched: { orders: 1, xof: 9_000 }, returned: { orders: 1, xof: 4_000 } });
    expect(figures.totals.collected).toEqual({ orders: 2, xof: 20_000 });
    expect(figures.ordersRead).toBe(6);
  });
});

describe('the reconciliation section', () => {
  const view = (reconciliation: ReconciliationSummary | undefined, wired = true) =>
    moneyBody({
      shops: [],
      shopId: 'dakar-mode',
      days: 30,
      cod: codFigures([]),
      reconciliation,
      reconciliationWired: wired,
    }).value;

  it('says no run has happened yet rather than showing figures', () => {
    expect(view(undefined)).toContain('No reconciliation run yet.');
    expect(view(undefined, false)).toContain('Run relais reconcile');
  });

  it('shows the latest run: findings per shop, repaired or not, and figures per day, newest first', () => {
    const page = view({
      runAt: '2026-05-04T06:00:00Z',
      window: { from: '2026-05-01T00:00:00Z', to: '2026-05-04T06:00:00Z' },
      shops: [
        {
          shopId: 'dakar-mode',
          ordersChecked: 42,
          shipmentsChecked: 40,
          findings: [
            { kind: 'missed_webhook', count: 2, repaired: 2 },
            { kind: 'cod_mismatch', count: 1, repaired: 0, note: '<b>15 000</b> owed' },
          ],
        },
        { shopId: 'abidjan-tech', ordersChecked: 3, shipmentsChecked: 3, findings: [] },
      ],
      days: [
        { day: '2026-05-02', codExpectedXof: 20_000, codCollectedXof: 15_000, heldInDisputeXof: 0 },
        { day: '2026-05-03', codExpectedXof: 9_000, codCollectedXof: 0, heldInDisputeXof: 9_000 },
      ],
    });
    expect(page).toContain('Last run 2026-05-04 06:00:00 UTC');
    expect(page).toContain('<span class="badge ok">missed webhook</span> 2 found, 2 repaired');
    expect(page).toContain('<span class="badge warn">cod mismatch</span> 1 found, 0 repaired');
    expect(page).toContain('&lt;b&gt;15 000&lt;/b&gt; owed');
    expect(page).toContain('<span class="badge ok">all matched</span>');
    expect(page.indexOf('2026-05-03')).toBeLessThan(page.indexOf('2026-05-02'));
    expect(page).toContain(formatXof(9_000));
  });
});
