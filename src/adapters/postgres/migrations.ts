/**
 * The ledger's schema, as numbered migrations applied in order by `relais migrate` (and by the demo and the
 * tests). A migration is never edited once released: a change is a new entry at the end. `LATEST_SCHEMA_VERSION`
 * is what this code needs; web and worker refuse to start on an older schema (database.ts).
 *
 * Timestamps are timestamptz; the parts of a record each written whole by one step (the normalised order, the
 * quote, the shipment, the delivery progress, the door amount) are jsonb, as the steps shape them
 * (src/ledger/order-ledger.ts). The columns the lookups filter and sort on are plain columns with their indexes.
 */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'order ledger',
    sql: `
CREATE TABLE orders (
  external_order_id text PRIMARY KEY,
  shop_id text NOT NULL,
  platform text NOT NULL,
  order_id text NOT NULL,
  order_name text NOT NULL,
  first_seen_at timestamptz NOT NULL,
  -- Bumped by each replay so a new dispatch job can be enqueued for an order whose last one completed.
  generation integer NOT NULL DEFAULT 0,
  state text NOT NULL,
  state_changed_at timestamptz NOT NULL,
  -- Set once the state is final (delivered, returned, cancelled): a final state is never left.
  finished_at timestamptz,
  hold jsonb,
  held_at timestamptz,
  -- The shop's last-modified time of the order applied (ms since the epoch): an older event changes nothing.
  version_ms bigint,
  -- The raw shop payload, kept only while the order is before dispatch (a replay may need it).
  payload jsonb,
  store_order jsonb,
  neighbourhood jsonb,
  quote jsonb,
  shipment jsonb,
  delivery jsonb,
  door jsonb,
  -- Following the shipment until the order is final (the polling fallback): when it was last polled.
  in_flight_since timestamptz,
  -- A shipment saved without a recorded markReady (the unready watchdog's input).
  unready_since timestamptz,
  personal_data_erased_at timestamptz
);
CREATE INDEX orders_by_shop_and_first_seen ON orders (shop_id, first_seen_at, external_order_id);
CREATE INDEX orders_held ON orders (held_at) WHERE state = 'held';
CREATE INDEX orders_in_flight ON orders (in_flight_since) WHERE in_flight_since IS NOT NULL;
CREATE INDEX orders_unready ON orders (unready_since) WHERE unready_since IS NOT NULL;
CREATE INDEX orders_open_by_first_seen ON orders (first_seen_at) WHERE finished_at IS NULL;
CREATE INDEX orders_finished_with_personal_data ON orders (finished_at) WHERE finished_at IS NOT NULL AND personal_data_erased_at IS NULL;
CREATE INDEX orders_by_shipment ON orders ((shipment->>'shipmentId')) WHERE shipment IS NOT NULL;

-- Every call made for an order, in the order it was noted.
CREATE TABLE order_timeline (
  id bigserial PRIMARY KEY,
  external_order_id text NOT NULL,
  shop_id text NOT NULL,
  at timestamptz NOT NULL,
  system text NOT NULL,
  operation text NOT NULL,
  outcome text NOT NULL,
  ms integer,
  detail text
);
CREATE INDEX order_timeline_by_order ON order_timeline (external_order_id, id);
CREATE INDEX order_timeline_by_shop ON order_timeline (shop_id);

-- Claims (disputes) on an order's shipment as last seen, decided ones included.
CREATE TABLE order_claims (
  external_order_id text NOT NULL,
  claim_key text NOT NULL,
  shop_id text NOT NULL,
  claim jsonb NOT NULL,
  decided boolean NOT NULL,
  seen_at timestamptz NOT NULL,
  PRIMARY KEY (external_order_id, claim_key)
);
CREATE INDEX order_claims_by_shop ON order_claims (shop_id);

-- Neighbourhood aliases added by operators while Relais runs, on top of the shop registry's.
CREATE TABLE shop_aliases (
  shop_id text NOT NULL,
  alias text NOT NULL,
  neighbourhood text NOT NULL,
  PRIMARY KEY (shop_id, alias)
);
`,
  },
  {
    version: 2,
    name: 'shop secrets',
    sql: `
-- Secrets of connected shops (tokens, refresh tokens, webhook secrets, API keys), each sealed with AES-256-GCM
-- (src/shops/secret-box.ts) under the key named by key_id; the shop and name are bound in as associated data.
CREATE TABLE shop_secrets (
  shop_id text NOT NULL,
  name text NOT NULL,
  key_id text NOT NULL,
  sealed bytea NOT NULL,
  expires_at timestamptz,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (shop_id, name)
);
CREATE INDEX shop_secrets_by_key ON shop_secrets (key_id);
`,
  },
  {
    version: 3,
    name: 'connected shops',
    sql: `
-- Shops connected through Relais (imported from a registry file, or connected from the dashboard): each one's
-- registry entry as in shops.json, its secrets as { "stored": name } references into shop_secrets.
CREATE TABLE shops (
  id text PRIMARY KEY,
  platform text NOT NULL,
  document jsonb NOT NULL,
  enabled boolean NOT NULL DEFAULT true,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
`,
  },
  {
    version: 4,
    name: 'service map',
    sql: `
-- Which names a delivery service prices, learned from its quotes (issue 24): per service (base URL and a digest
-- of its organisation's key, never the key), the name as sent in city, priced below the fallback tariff or at it,
-- the quote's total and what it priced, and when.
CREATE TABLE service_map (
  service_id text NOT NULL,
  base_url text NOT NULL,
  name text NOT NULL,
  priced boolean NOT NULL,
  total_xof integer NOT NULL,
  quoted_for text NOT NULL,
  learned_at timestamptz NOT NULL,
  PRIMARY KEY (service_id, name)
);
`,
  },
  {
    version: 5,
    name: 'overview figures',
    sql: `
-- Every hold an order went through, kept after the order moves on (its hold column is then cleared): the
-- dashboard's holds by reason over time. No personal data: the reason's code only.
CREATE TABLE order_holds (
  external_order_id text NOT NULL,
  shop_id text NOT NULL,
  code text NOT NULL,
  held_at timestamptz NOT NULL
);
CREATE INDEX order_holds_by_shop_and_time ON order_holds (shop_id, held_at);
CREATE INDEX order_holds_by_order ON order_holds (external_order_id);
-- The overview's cash by the day it was collected or returned, and the orders page's filter on that day.
CREATE INDEX orders_by_shop_and_state_change ON orders (shop_id, state_changed_at);
-- Holds from before this migration: the orders held now.
INSERT INTO order_holds (external_order_id, shop_id, code, held_at)
  SELECT external_order_id, shop_id, hold->>'code', held_at FROM orders WHERE state = 'held' AND hold IS NOT NULL;
`,
  },
  {
    version: 6,
    name: 'same-second order versions',
    sql: `
-- When the applied version reached Relais (ms since the epoch): of two events in the same second (shops keep whole
-- seconds), the one received earlier is the older, whichever job takes the order's lock first.
ALTER TABLE orders ADD COLUMN version_received_ms bigint;
`,
  },
  {
    version: 7,
    name: 'first contact',
    sql: `
-- Delivery webhooks that reached a shop's secret URL but that its wire profile could not verify or read, kept so a
-- profile can be learned from them (src/ledger/first-contact.ts): the body as sent, header names, and the values of
-- the headers that look like signatures only. Bounded per shop by the adapter (20, 7 days).
CREATE TABLE delivery_webhook_samples (
  id bigserial PRIMARY KEY,
  shop_id text NOT NULL,
  received_at timestamptz NOT NULL,
  refusal text NOT NULL,
  body bytea NOT NULL,
  header_names text[] NOT NULL,
  signature_candidates jsonb NOT NULL
);
CREATE INDEX delivery_webhook_samples_by_shop ON delivery_webhook_samples (shop_id, received_at DESC);
-- Every state name a shop's delivery service used, with where it first appeared.
CREATE TABLE service_states_seen (
  shop_id text NOT NULL,
  state text NOT NULL,
  first_seen_at timestamptz NOT NULL,
  source text NOT NULL,
  step text,
  after_state text,
  after_step text,
  PRIMARY KEY (shop_id, state)
);
-- A shop's own wire profiles, versioned: the newest is in force (the file-based built-ins are the starting points).
CREATE TABLE shop_wire_profiles (
  shop_id text NOT NULL,
  version integer NOT NULL,
  document jsonb NOT NULL,
  source text NOT NULL,
  stored_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (shop_id, version)
);
`,
  },
  {
    version: 8,
    name: 'shipment requested',
    sql: `
-- When a createShipment was first about to be sent for the order, written before it leaves: an order without it
-- has no shipment at the service, and its first dispatch attempt skips the lookup by external order id (issue 27).
ALTER TABLE orders ADD COLUMN shipment_requested_at timestamptz;
-- Orders from before this column may have had a createShipment sent: every open order without a saved shipment
-- is looked up once more before its next createShipment, as before.
UPDATE orders SET shipment_requested_at = state_changed_at WHERE shipment IS NULL AND finished_at IS NULL;
`,
  },
  {
    version: 9,
    name: 'outstanding, by its name',
    sql: `
-- The normalised order's outstanding (what the shop says is still owed) was stored as amountToCollect, a name that
-- reads like the amount at the door (issue 26): stored orders take the name the code now reads. orders.store_order is
-- the only column holding a normalised order (holds, claims, the timeline and the samples hold none).
UPDATE orders
   SET store_order = (store_order - 'amountToCollect') || jsonb_build_object('outstanding', store_order->'amountToCollect')
 WHERE store_order ? 'amountToCollect';
`,
  },
];

export const LATEST_SCHEMA_VERSION = MIGRATIONS[MIGRATIONS.length - 1]!.version;
