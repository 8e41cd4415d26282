import { describe, expect, it } from 'vitest';
import { countActions, csvField, reportCsv, reportJson, reportText, textTable } from './output.js';
import type { ReconciliationReport } from './types.js';

const report: ReconciliationReport = {
  runAt: '2026-11-20T08:00:00.000Z',
  window: { from: '2026-11-17T00:00:00.000Z', to: '2026-11-20T08:00:00.000Z' },
  repair: false,
  shops: [
    {
      shopId: 'dakar-mode',
      platform: 'shopify',
      runAt: '2026-11-20T08:00:00.000Z',
      window: { from: '2026-11-17T00:00:00.000Z', to: '2026-11-20T08:00:00.000Z' },
      repair: false,
      ordersChecked: 3,
      shipmentsChecked: 2,
      findings: [
        {
          kind: 'cod_mismatch',
          shopId: 'dakar-mode',
          externalOrderId: 'dakar-mode:1',
          orderName: '#1001',
          shipmentId: 'shp_1',
          shipmentStatus: 'READY',
          amountXof: 17_000,
          action: 'alert',
          detail: 'owes 17000 XOF, "carries" 5000, say',
          advice: 'cancel\nand replay',
        },
        {
          kind: 'missed_webhook',
          shopId: 'dakar-mode',
          externalOrderId: 'dakar-mode:2',
          orderName: '=HYPERLINK("x")',
          action: 'would_repair',
          detail: 'never received',
        },
      ],
      days: [
        {
          day: '2026-11-18',
          orders: 3,
          shipped: 2,
          delivered: 1,
          codOrders: 2,
          codExpectedXof: 34_000,
          codCollectedXof: 17_000,
          heldInDisputeXof: 0,
          openDisputes: 0,
        },
      ],
    },
    {
      shopId: 'abidjan-tech',
      platform: 'woocommerce',
      runAt: '2026-11-20T08:00:00.000Z',
      window: { from: '', to: '' },
      repair: false,
      ordersChecked: 0,
      shipmentsChecked: 0,
      findings: [],
      days: [],
      error: 'WooCommerce GET orders: answered 401',
    },
  ],
};

describe('CSV', () => {
  it('quotes commas, quotes and line breaks, and defuses formulas', () => {
    expect(csvField('plain')).toBe('plain');
    expect(csvField('a,b')).toBe('"a,b"');
    expect(csvField('say "hi"')).toBe('"say ""hi"""');
    expect(csvField('two\nlines')).toBe('"two\nlines"');
    expect(csvField('=SUM(A1)')).toBe("'=SUM(A1)");
    expect(csvField('-2+3')).toBe("'-2+3");
    expect(csvField(17_000)).toBe('17000');
    expect(csvField(undefined)).toBe('');
  });

  it('writes one row per finding and per day, CRLF terminated, every row as wide as the header', () => {
    const text = reportCsv(report);
    expect(text.endsWith('\r\n')).toBe(true);
    const lines = text.split('\r\n').filter(Boolean);
    expect(lines[0]).toMatch(/^record,shop,day,kind,action,/);
    expect(lines).toHaveLength(1 + 2 + 1 + 1);
    expect(text).toContain('"owes 17000 XOF, ""carries"" 5000, say"');
    expect(text).toContain('"cancel\nand replay"');
    expect(text).toContain(`"'=HYPERLINK(""x"")"`);
    expect(text).toContain('day,dakar-mode,2026-11-18,');
    expect(text).toContain('shop_unreadable,alert');
  });
});

describe('JSON and the terminal table', () => {
  it('prints the whole report as JSON', () => {
    expect(JSON.parse(reportJson(report))).toEqual(report);
  });

  it('pads columns to their widest cell and cuts overlong cells', () => {
    expect(
      textTable(
        ['a', 'bb'],
        [
          ['xxx', 'y'],
          ['z', 'w'],
        ],
      ).split('\n'),
    ).toEqual(['a    bb', '---  --', 'xxx  y', 'z    w']);
    expect(textTable(['h'], [['0123456789']], 5)).toContain('0123…');
  });

  it('shows each shop, its findings and days, an unreadable shop, and a summary line', () => {
    const text = reportText(report);
    expect(text).toContain('== dakar-mode (shopify): 3 orders, 2 shipments');
    expect(text).toContain('REPAIRABLE');
    expect(text).toContain('17 000');
    expect(text).toContain('could not be reconciled: WooCommerce GET orders: answered 401');
    expect(text).toContain('2 finding(s), 1 repairable with --repair, 2 need a person.');
    expect(countActions(report)).toEqual({ findings: 2, repaired: 0, queued: 0, repairable: 1, alerts: 2 });
  });
});
