/**
 * The small formats Shopify is particular about: global ids, money strings, timestamps.
 */
import { GraphQLError } from 'graphql';

const GID = /^gid:\/\/shopify\/([A-Za-z]+)\/(\d+)(?:\?.*)?$/;

export function gid(type: string, id: number): string {
  return `gid://shopify/${type}/${id}`;
}

/** Splits a global id. Anything that is not `gid://shopify/<Type>/<digits>` is an argument error at Shopify. */
export function parseGid(value: unknown): { type: string; id: number } {
  const match = typeof value === 'string' ? GID.exec(value) : null;
  if (!match)
    throw new GraphQLError(`Invalid global id '${String(value)}'`, { extensions: { code: 'INVALID_GLOBAL_ID' } });
  return { type: match[1] ?? '', id: Number(match[2]) };
}

/** The numeric id of `value` when it is a gid of `type`, undefined when it is a gid of another type. */
export function idOfType(value: unknown, type: string): number | undefined {
  const parsed = parseGid(value);
  return parsed.type === type ? parsed.id : undefined;
}

/**
 * Money is kept in hundredths (integers) so sums never meet floating point. 15000 XOF is 1_500_000.
 * Accepts "15000", "15000.00", 15000 and 15000.5; refuses anything with more than two decimals.
 */
export function toHundredths(value: string | number): number {
  const text = typeof value === 'number' ? String(value) : value.trim();
  const match = /^(-)?(\d+)(?:\.(\d{1,2}))?$/.exec(text);
  if (!match) throw new Error(`not a money amount: ${JSON.stringify(value)}`);
  const units = Number(match[2]) * 100 + Number((match[3] ?? '').padEnd(2, '0'));
  return match[1] ? -units : units;
}

/** REST money: always two decimals ("15000.00"), as in Shopify's webhook bodies. */
export function restMoney(hundredths: number): string {
  const sign = hundredths < 0 ? '-' : '';
  const abs = Math.abs(hundredths);
  return `${sign}${Math.trunc(abs / 100)}.${String(abs % 100).padStart(2, '0')}`;
}

/**
 * GraphQL `Decimal`: Shopify prints the shortest form with at least one decimal ("15000.0", "24.99", "24.5"),
 * not the REST "15000.00". Readers must accept both.
 */
export function graphqlDecimal(hundredths: number): string {
  const rest = restMoney(hundredths);
  return rest.endsWith('0') ? rest.slice(0, -1) : rest;
}

/** GraphQL DateTime: UTC with a Z and no fraction ("2026-11-22T10:15:00Z"). */
export function graphqlTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/**
 * REST timestamps carry the shop's UTC offset ("2026-11-22T10:15:00+00:00"). The emulated shops sit in
 * Dakar and Abidjan, both UTC all year, so the offset is always +00:00.
 */
export function restTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, '+00:00');
}
