/**
 * Relay connections as Shopify serves them: `first`/`after` or `last`/`before` (one of first or last is
 * required), `reverse`, opaque cursors. A cursor remembers the sort value and id of its item, so paging
 * stays correct while other orders are created or updated between pages.
 */
import { GraphQLError } from 'graphql';

export interface ConnectionArgs {
  first?: number | null;
  last?: number | null;
  after?: string | null;
  before?: string | null;
  reverse?: boolean | null;
}

export type SortValue = number | string;

export interface Connection<V> {
  edges: { cursor: string; node: V }[];
  nodes: V[];
  pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; startCursor: string | null; endCursor: string | null };
}

const MAX_PAGE_SIZE = 250;

interface CursorKey {
  last_id: number;
  last_value: SortValue;
}

function encodeCursor(key: CursorKey): string {
  return Buffer.from(JSON.stringify(key)).toString('base64');
}

function decodeCursor(cursor: string): CursorKey {
  try {
    const parsed: unknown = JSON.parse(Buffer.from(cursor, 'base64').toString('utf8'));
    if (typeof parsed === 'object' && parsed !== null && 'last_id' in parsed && 'last_value' in parsed) {
      const { last_id: lastId, last_value: lastValue } = parsed;
      if (typeof lastId === 'number' && (typeof lastValue === 'number' || typeof lastValue === 'string')) {
        return { last_id: lastId, last_value: lastValue };
      }
    }
  } catch {
    // fall through to the error below
  }
  throw new GraphQLError(`Invalid cursor for current pagination sort.`);
}

function compareKeys(a: CursorKey, b: CursorKey): number {
  if (a.last_value !== b.last_value) return a.last_value < b.last_value ? -1 : 1;
  return a.last_id - b.last_id;
}

/**
 * `items` in any order; `keyOf` gives the sort value and id. The result is ascending by (value, id),
 * descending with `reverse`.
 */
export function connection<T, V>(
  items: readonly T[],
  args: ConnectionArgs,
  keyOf: (item: T) => { id: number; value: SortValue },
  toNode: (item: T) => V,
): Connection<V> {
  const { first, last } = args;
  if ((first === undefined || first === null) && (last === undefined || last === null)) {
    throw new GraphQLError('you must provide one of first or last');
  }
  for (const [name, value] of [
    ['first', first],
    ['last', last],
  ] as const) {
    if (typeof value === 'number' && (value < 0 || value > MAX_PAGE_SIZE)) {
      throw new GraphQLError(`The \`${name}\` argument must be between 0 and ${MAX_PAGE_SIZE}.`);
    }
  }
  const direction = args.reverse ? -1 : 1;
  const keyed = items.map((item) => {
    const key = keyOf(item);
    return { item, key: { last_id: key.id, last_value: key.value } };
  });
  keyed.sort((a, b) => direction * compareKeys(a.key, b.key));
  let window = keyed;
  if (args.after) {
    const after = decodeCursor(args.after);
    window = window.filter((entry) => direction * compareKeys(entry.key, after) > 0);
  }
  if (args.before) {
    const before = decodeCursor(args.before);
    window = window.filter((entry) => direction * compareKeys(entry.key, before) < 0);
  }
  let page = window;
  let hasNextPage = false;
  let hasPreviousPage = Boolean(args.after) && window.length < keyed.length;
  if (typeof first === 'number') {
    hasNextPage = page.length > first;
    page = page.slice(0, first);
  }
  if (typeof last === 'number') {
    hasPreviousPage = page.length > last;
    page = page.slice(Math.max(0, page.length - last));
    if (args.before) hasNextPage = true;
  }
  const edges = page.map((entry) => ({ cursor: encodeCursor(entry.key), node: toNode(entry.item) }));
  return {
    edges,
    nodes: edges.map((edge) => edge.node),
    pageInfo: {
      hasNextPage,
      hasPreviousPage,
      startCursor: edges[0]?.cursor ?? null,
      endCursor: edges.at(-1)?.cursor ?? null,
    },
  };
}
