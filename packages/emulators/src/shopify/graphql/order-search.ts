/**
 * The part of Shopify's search syntax the `orders(query:)` argument needs: space-separated terms joined by
 * AND, `field:value` with `>`, `>=`, `<`, `<=` on dates and ids, quoted values, `-field:value` negation.
 * Unknown fields are ignored and reported as a search warning, as Shopify does, rather than failing.
 */
import { displayFulfillmentStatus, type StoredOrder } from '../model.js';

export interface SearchWarning {
  field: string;
  message: string;
}

export interface OrderSearch {
  matches(order: StoredOrder): boolean;
  warnings: SearchWarning[];
}

type Comparator = '=' | '>' | '>=' | '<' | '<=';

interface Term {
  negated: boolean;
  field: string | null;
  comparator: Comparator;
  value: string;
}

function tokenize(query: string): string[] {
  const tokens: string[] = [];
  let current = '';
  let quote: string | null = null;
  for (const char of query) {
    if (quote) {
      if (char === quote) quote = null;
      else current += char;
    } else if (char === '"' || char === "'") {
      quote = char;
    } else if (/\s/.test(char)) {
      if (current) tokens.push(current);
      current = '';
    } else {
      current += char;
    }
  }
  if (current) tokens.push(current);
  return tokens;
}

function parseTerm(token: string): Term {
  const negated = token.startsWith('-') || token.startsWith('NOT ');
  const body = negated ? token.slice(1) : token;
  const colon = body.indexOf(':');
  if (colon <= 0) return { negated, field: null, comparator: '=', value: body };
  const field = body.slice(0, colon).toLowerCase();
  let rest = body.slice(colon + 1);
  let comparator: Comparator = '=';
  for (const candidate of ['>=', '<=', '>', '<'] as const) {
    if (rest.startsWith(candidate)) {
      comparator = candidate;
      rest = rest.slice(candidate.length);
      break;
    }
  }
  return { negated, field, comparator, value: rest };
}

function compare(actual: number, comparator: Comparator, expected: number): boolean {
  switch (comparator) {
    case '>':
      return actual > expected;
    case '>=':
      return actual >= expected;
    case '<':
      return actual < expected;
    case '<=':
      return actual <= expected;
    default:
      return actual === expected;
  }
}

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;
const DAY_MS = 86_400_000;

function compareDate(actual: number, comparator: Comparator, value: string): boolean | undefined {
  const parsed = Date.parse(DATE_ONLY.test(value) ? `${value}T00:00:00Z` : value);
  if (Number.isNaN(parsed)) return undefined;
  if (comparator === '=' && DATE_ONLY.test(value)) return actual >= parsed && actual < parsed + DAY_MS;
  // A bare date compared with > means "after that day", as in Shopify's admin.
  if (comparator === '>' && DATE_ONLY.test(value)) return actual >= parsed + DAY_MS;
  if (comparator === '<=' && DATE_ONLY.test(value)) return actual < parsed + DAY_MS;
  return compare(actual, comparator, parsed);
}

const FULFILLMENT_STATUS_ALIASES: Record<string, string> = {
  unshipped: 'UNFULFILLED',
  unfulfilled: 'UNFULFILLED',
  shipped: 'FULFILLED',
  fulfilled: 'FULFILLED',
  partial: 'PARTIALLY_FULFILLED',
};

function termMatches(term: Term, order: StoredOrder): boolean | undefined {
  const value = term.value;
  const lower = value.toLowerCase();
  switch (term.field) {
    case null:
      return (
        order.name.toLowerCase().includes(lower) ||
        (order.email ?? '').toLowerCase().includes(lower) ||
        order.tags.some((tag) => tag.toLowerCase() === lower)
      );
    case 'created_at':
      return compareDate(order.createdAt, term.comparator, value);
    case 'updated_at':
      return compareDate(order.updatedAt, term.comparator, value);
    case 'processed_at':
      return compareDate(order.processedAt, term.comparator, value);
    case 'id': {
      const id = Number(value.replace(/^gid:\/\/shopify\/Order\//, ''));
      return Number.isSafeInteger(id) ? compare(order.id, term.comparator, id) : undefined;
    }
    case 'name':
      return order.name.toLowerCase() === (lower.startsWith('#') ? lower : `#${lower}`);
    case 'financial_status':
      return order.financialStatus === lower;
    case 'fulfillment_status': {
      const wanted = FULFILLMENT_STATUS_ALIASES[lower];
      return wanted === undefined ? undefined : displayFulfillmentStatus(order) === wanted;
    }
    case 'status':
      if (lower === 'any') return true;
      if (lower === 'cancelled') return order.cancelledAt !== null;
      if (lower === 'closed') return order.closedAt !== null;
      if (lower === 'open' || lower === 'not_closed') return order.closedAt === null && order.cancelledAt === null;
      return undefined;
    case 'tag':
      return order.tags.some((tag) => tag.toLowerCase() === lower);
    case 'tag_not':
      return !order.tags.some((tag) => tag.toLowerCase() === lower);
    case 'email':
      return (order.email ?? '').toLowerCase() === lower;
    case 'gateway':
      return order.gatewayNames.some((name) => name.toLowerCase() === lower);
    case 'source_name':
      return order.sourceName.toLowerCase() === lower;
    case 'test':
      return String(order.test) === lower;
    default:
      return undefined;
  }
}

const SEARCH_FIELDS = new Set([
  'created_at',
  'updated_at',
  'processed_at',
  'id',
  'name',
  'financial_status',
  'fulfillment_status',
  'status',
  'tag',
  'tag_not',
  'email',
  'gateway',
  'source_name',
  'test',
]);

/** A value the field cannot use (an unparseable date) leaves the term out rather than matching nothing. */
export function parseOrderSearch(query: string | null | undefined): OrderSearch {
  const warnings: SearchWarning[] = [];
  const terms: Term[] = [];
  for (const token of tokenize(query ?? '')) {
    if (token === 'AND') continue;
    if (token === 'OR') {
      warnings.push({ field: 'OR', message: 'The Shopify emulator treats OR as AND.' });
      continue;
    }
    terms.push(parseTerm(token));
  }
  const usable = terms.filter((term) => {
    const known = term.field === null || SEARCH_FIELDS.has(term.field);
    if (!known) warnings.push({ field: term.field ?? '', message: 'Invalid search field for this query.' });
    return known;
  });
  return {
    warnings,
    matches(order) {
      return usable.every((term) => {
        const result = termMatches(term, order);
        if (result === undefined) return true;
        return term.negated ? !result : result;
      });
    },
  };
}
