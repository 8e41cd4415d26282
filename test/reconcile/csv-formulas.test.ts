/**
 * CSV exports (relais reconcile --csv) defuse every cell that a spreadsheet would run as a formula: one
 * beginning with = + - @ (or a tab or carriage return), in ASCII or in their full-width forms, which
 * spreadsheets fold to ASCII. Order notes and names are customer-controlled text.
 */
import { describe, expect, it } from 'vitest';
import { csvField } from '../../src/orders/reconcile/output.js';

describe('CSV formula cells', () => {
  it('prefixes with a quote a cell beginning with a full-width ＝ ＋ － or ＠', () => {
    expect(csvField('＝HYPERLINK("http://x.example","clic")')).toBe('"\'＝HYPERLINK(""http://x.example"",""clic"")"');
    expect(csvField('＋33 6 12')).toBe("'＋33 6 12");
    expect(csvField('－1+2')).toBe("'－1+2");
    expect(csvField('＠SUM(A1)')).toBe("'＠SUM(A1)");
  });

  it('still prefixes the ASCII forms, and leaves ordinary text and a full-width character later in the cell alone', () => {
    for (const cell of ['=1+1', '+1', '-1', '@A1', '\t=1']) expect(csvField(cell).replace(/^"/, '')).toMatch(/^'/);
    expect(csvField('Villa 12 ＝ Sacré Coeur')).toBe('Villa 12 ＝ Sacré Coeur');
  });
});
