/**
 * The OrderLedger contract (src/ledger/order-ledger.ts): what every ledger must do, written once and run against
 * each adapter, as one queue contract is run against two queues. Jobs, reconciliation, the dashboard and the CLI
 * rely on these behaviours; a ledger that passes them may stand in for another.
 *
 * Run against the PostgreSQL adapter (src/adapters/postgres/pg-ledger.test.ts, real PostgreSQL) and against the
 * in-memory ledger the use cases' unit tests run on (test/doubles/memory-ledger.test.ts).
 */
import fc from 'fast-check';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Platform, StoreOrder } from '../../src/domain/order.js';
import { DISPATCHED_STATES, FINAL_STATES, ORDER_STATES } from '../../src/domain/order-state.js';
import { allHeldOrders, type OrderLedger } from '../../src/ledger/order-ledger.js';

/** A ledger on an empty store of its own, and other ledgers on the same store (other workers). */
export interface LedgerUnderTest {
  ledger: OrderLedger;
  /** Another ledger on the same store, as a second worker has: for PostgreSQL, with connections of its own. */
  sibling(): OrderLedger;
  stop(): Promise<void>;
}

export interface LedgerSettings {
  retentionDays: number;
  /** Timeline entries `timeline()` answers at most. */
  timelineLength: number;
}

export type LedgerFactory = (settings: LedgerSettings) => Promise<LedgerUnderTest>;

const DAY = 86_400_000;

function metaOf(orderId: string, platform: Platform = 'shopify') {
  return {
    externalOrderId: `dakar-mode:${orderId}`,
    shopId: 'dakar-mode',
    platform,
    orderId,
    orderName: `#${orderId}`,
  };
}

async function receive(ledger: OrderLedger, orderId: string, at: Date, payload: unknown = { id: orderId }) {
  return ledger.recordEvent({
    meta: metaOf(orderId),
    payload,
    now: at,
    timeline: { at: at.toISOString(), system: 'shop', operation: 'webhook orders/create', outcome: 'received' },
  });
}

/** An event carrying the order as last modified at `version` (the shop's time), its `note` in payload and order. */
function recordVersion(
  ledger: OrderLedger,
  orderId: string,
  event: { version: string; note: string; topic: string; now: string; receivedAt?: string; platform?: Platform },
) {
  const now = new Date(event.now);
  return ledger.recordEvent({
    meta: metaOf(orderId, event.platform),
    payload: { id: orderId, note: event.note },
    order: { updatedAt: event.version, note: event.note } as unknown as StoreOrder,
    version: event.version,
    ...(event.receivedAt === undefined ? {} : { receivedAt: event.receivedAt }),
    now,
    timeline: {
      at: now.toISOString(),
      system: 'shop',
      operation: `webhook ${event.topic} (${event.note})`,
      outcome: 'received',
    },
  });
}

/** The contract, as a vitest suite named after the adapter; `start` gives each case a ledger on an empty store. */
export function orderLedgerContract(adapter: string, start: LedgerFactory): void {
  describe(`the order ledger (${adapter})`, () => {
    const started: LedgerUnderTest[] = [];
    afterEach(async () => {
      await Promise.all(started.splice(0).map((under) => under.stop()));
    });
    /** A ledger on an empty store of its own, stopped after the case. */
    const fresh = async (): Promise<LedgerUnderTest> => {
      const under = await start({ retentionDays: 30, timelineLength: 5 });
      started.push(under);
      return under;
    };

    describe('one worker', () => {
      it('records an order once: a second event keeps its first-seen time and state, and both events are on the timeline', async () => {
        const { ledger } = await fresh();
        const first = await receive(ledger, '1', new Date('2026-11-01T10:00:00Z'));
        await ledger.setState('dakar-mode:1', 'waiting', new Date('2026-11-01T10:00:01Z'));
        const second = await receive(ledger, '1', new Date('2026-11-01T11:00:00Z'), { id: '1', note: 'edited' });
        expect(first.state).toBe('received');
        expect(second.state).toBe('waiting');
        expect(second.meta.firstSeenAt).toBe('2026-11-01T10:00:00.000Z');
        expect(await ledger.payload('dakar-mode:1')).toEqual({ id: '1', note: 'edited' });
        expect(await ledger.timeline('dakar-mode:1')).toHaveLength(2);
      });

      it('keeps the raw payload until the order is ready, and never stores it again after', async () => {
        const { ledger } = await fresh();
        await receive(ledger, '2', new Date('2026-11-01T10:00:00Z'));
        await ledger.setState('dakar-mode:2', 'dispatching', new Date('2026-11-01T10:00:01Z'));
        expect(await ledger.payload('dakar-mode:2')).toEqual({ id: '2' });
        await ledger.setState('dakar-mode:2', 'ready', new Date('2026-11-01T10:00:02Z'));
        expect(await ledger.payload('dakar-mode:2')).toBeUndefined();
        const later = await receive(ledger, '2', new Date('2026-11-01T12:00:00Z'), { id: '2', note: 'after shipping' });
        expect(later.state).toBe('ready');
        expect(await ledger.payload('dakar-mode:2')).toBeUndefined();
      });

      it('records an event without its payload keeping the stored one, and keeps a payload only while the order is before dispatch', async () => {
        const { ledger } = await fresh();
        const id = 'dakar-mode:3';
        await ledger.recordEvent({ meta: metaOf('3'), now: new Date('2026-11-01T10:00:00Z') });
        expect(await ledger.payload(id)).toBeUndefined();
        await ledger.hold(
          id,
          { code: 'no_neighbourhood', message: 'no neighbourhood' },
          new Date('2026-11-01T10:00:01Z'),
        );
        expect(await ledger.keepPayload(id, { id: '3', note: 'held' })).toBe(true);
        await ledger.recordEvent({ meta: metaOf('3'), now: new Date('2026-11-01T11:00:00Z') });
        expect(await ledger.payload(id)).toEqual({ id: '3', note: 'held' });
        await ledger.setState(id, 'received', new Date('2026-11-01T11:00:01Z'), 'resolution');
        await ledger.setState(id, 'ready', new Date('2026-11-01T11:00:02Z'));
        expect(await ledger.keepPayload(id, { id: '3', note: 'too late' })).toBe(false);
        expect(await ledger.payload(id)).toBeUndefined();
        expect(await ledger.keepPayload('dakar-mode:unknown', { id: 'unknown' })).toBe(false);
      });

      it('notes with the event that a createShipment may follow, answering the note as it was before, and never for a held order', async () => {
        const { ledger } = await fresh();
        const id = 'dakar-mode:5';
        const at = (s: string) => new Date(`2026-11-01T10:00:0${s}Z`);
        const first = await ledger.recordEvent({ meta: metaOf('5'), now: at('0'), shipmentMayFollow: true });
        expect([first.shipmentRequestedAt, first.shipmentRequestNoted]).toEqual([undefined, true]);
        expect((await ledger.get(id))?.shipmentRequestedAt).toBe('2026-11-01T10:00:00.000Z');
        const second = await ledger.recordEvent({ meta: metaOf('5'), now: at('1'), shipmentMayFollow: true });
        expect([second.shipmentRequestedAt, second.shipmentRequestNoted]).toEqual(['2026-11-01T10:00:00.000Z', true]);

        const heldId = 'dakar-mode:6';
        await ledger.recordEvent({ meta: metaOf('6'), now: at('0') });
        await ledger.hold(heldId, { code: 'no_neighbourhood', message: 'no neighbourhood' }, at('1'));
        const again = await ledger.recordEvent({ meta: metaOf('6'), now: at('2'), shipmentMayFollow: true });
        expect(again.shipmentRequestNoted).toBeUndefined();
        expect((await ledger.get(heldId))?.shipmentRequestedAt).toBeUndefined();
      });

      it('never moves a delivered, returned or cancelled order to another state, and says so by answering false', async () => {
        const { ledger } = await fresh();
        const at = (minute: number) => new Date(Date.UTC(2026, 10, 1, 10, minute));
        for (const [orderId, final] of [
          ['f1', 'delivered'],
          ['f2', 'returned'],
          ['f3', 'cancelled'],
        ] as const) {
          await receive(ledger, orderId, at(0));
          await ledger.setState(`dakar-mode:${orderId}`, 'ready', at(1));
          expect(await ledger.setState(`dakar-mode:${orderId}`, final, at(2))).toBe(true);
          expect(await ledger.setState(`dakar-mode:${orderId}`, 'cancel_refused', at(3))).toBe(false);
          expect(await ledger.setState(`dakar-mode:${orderId}`, 'in_delivery', at(4))).toBe(false);
          expect(
            await ledger.setState(`dakar-mode:${orderId}`, final === 'cancelled' ? 'delivered' : 'cancelled', at(5)),
          ).toBe(false);
          const record = await ledger.get(`dakar-mode:${orderId}`);
          expect([record?.state, record?.stateChangedAt]).toEqual([final, at(2).toISOString()]);
        }
      });

      it('keeps the newer order and payload when an older version of the order comes later, notes that event as ignored, and still applies one of the same version', async () => {
        const { ledger } = await fresh();
        const id = 'dakar-mode:v1';
        const event = (version: string, note: string) =>
          recordVersion(ledger, 'v1', { version, note, topic: 'orders/updated', now: '2026-11-01T12:00:00Z' });
        await event('2026-11-01T10:00:00Z', 'first');
        await event('2026-11-01T10:02:00Z', 'newer');
        const late = await event('2026-11-01T10:01:00Z', 'older');
        expect(late.olderThanApplied).toEqual({
          version: '2026-11-01T10:01:00.000Z',
          applied: '2026-11-01T10:02:00.000Z',
        });
        expect([(late.order as unknown as { note: string }).note, await ledger.payload(id)]).toEqual([
          'newer',
          { id: 'v1', note: 'newer' },
        ]);
        expect((await ledger.timeline(id)).map((e) => `${e.operation}: ${e.outcome}`)).toEqual([
          'webhook orders/updated (first): received',
          'webhook orders/updated (newer): received',
          'webhook orders/updated (older): ignored_older',
        ]);
        const same = await event('2026-11-01T10:02:00Z', 'same version');
        expect([same.olderThanApplied, (same.order as unknown as { note: string }).note]).toEqual([
          undefined,
          'same version',
        ]);
      });

      it('of two events in the same second (a refund made as the order was placed), keeps the one received later even when the earlier one is recorded after it', async () => {
        const { ledger } = await fresh();
        const id = 'dakar-mode:s1';
        const event = (note: string, receivedAt: string) =>
          recordVersion(ledger, 's1', {
            version: '2026-11-01T10:00:05Z',
            note,
            receivedAt,
            topic: 'order.updated',
            now: '2026-11-01T10:00:06Z',
            platform: 'woocommerce',
          });
        await event('placed', '2026-11-01T10:00:05.100Z');
        await event('refunded', '2026-11-01T10:00:05.300Z');
        const late = await event('placed, its job run last', '2026-11-01T10:00:05.200Z');
        expect(late.olderThanApplied).toEqual({
          version: '2026-11-01T10:00:05.000Z',
          applied: '2026-11-01T10:00:05.000Z',
        });
        expect([(late.order as unknown as { note: string }).note, await ledger.payload(id)]).toEqual([
          'refunded',
          { id: 's1', note: 'refunded' },
        ]);
        expect((await ledger.timeline(id)).map((e) => e.outcome)).toEqual(['received', 'received', 'ignored_older']);
        // A replay of the same version, received since, is applied.
        const replayed = await event('replayed', '2026-11-01T10:30:00.000Z');
        expect([replayed.olderThanApplied, (replayed.order as unknown as { note: string }).note]).toEqual([
          undefined,
          'replayed',
        ]);
      });

      it('lists held orders newest hold first, so a new hold shows however many are held', async () => {
        const { ledger } = await fresh();
        for (const [orderId, minute] of [
          ['h1', 1],
          ['h2', 2],
          ['h3', 3],
        ] as const) {
          await receive(ledger, orderId, new Date(Date.UTC(2026, 10, 1, 10, 0)));
          await ledger.hold(
            `dakar-mode:${orderId}`,
            { code: 'neighbourhood_not_found', message: 'no neighbourhood' },
            new Date(Date.UTC(2026, 10, 1, 10, minute)),
          );
        }
        expect((await ledger.listHeld(2)).map((r) => r.meta.orderId)).toEqual(['h3', 'h2']);
      });

      it('remembers when a createShipment was first about to be sent, through later steps and replays', async () => {
        const { ledger } = await fresh();
        await receive(ledger, '9', new Date('2026-11-01T10:00:00Z'));
        const id = 'dakar-mode:9';
        expect((await ledger.get(id))?.shipmentRequestedAt).toBeUndefined();
        await ledger.apply(id, {
          now: new Date('2026-11-01T10:00:01Z'),
          state: 'dispatching',
          shipmentRequested: true,
        });
        await ledger.apply(id, { now: new Date('2026-11-01T10:00:02Z'), shipmentRequested: true });
        await ledger.apply(id, { now: new Date('2026-11-01T10:00:03Z'), state: 'dispatching' });
        await ledger.bumpGeneration(id);
        expect((await ledger.get(id))?.shipmentRequestedAt).toBe('2026-11-01T10:00:01.000Z');
      });

      it('erases the normalised order and payload of orders finished more than the retention ago, keeping their state, amounts and timeline', async () => {
        const { ledger } = await fresh();
        const now = new Date('2026-11-22T00:00:00Z');
        for (const [orderId, finishedDaysAgo] of [
          ['old', 31],
          ['recent', 29],
        ] as const) {
          const at = new Date(now.getTime() - finishedDaysAgo * DAY);
          await ledger.recordEvent({
            meta: metaOf(orderId),
            payload: { id: orderId },
            order: { orderName: `#${orderId}`, dropoff: { phone: '+221770000000' } } as unknown as StoreOrder,
            now: at,
            timeline: { at: at.toISOString(), system: 'shop', operation: 'webhook orders/create', outcome: 'received' },
          });
          await ledger.save(`dakar-mode:${orderId}`, 'door', { collect: 15000 });
          await ledger.setState(`dakar-mode:${orderId}`, 'delivered', at);
        }
        await receive(ledger, 'open', new Date(now.getTime() - 40 * DAY));
        expect(await ledger.erasePersonalDataOfFinished(new Date(now.getTime() - 30 * DAY))).toBe(1);
        const [old, recent, open] = await ledger.getMany(['dakar-mode:old', 'dakar-mode:recent', 'dakar-mode:open']);
        expect([old?.order, old?.state, old?.door]).toEqual([undefined, 'delivered', { collect: 15000 }]);
        expect(await ledger.timeline('dakar-mode:old')).toHaveLength(1);
        expect([recent?.order?.orderName, open?.state]).toEqual(['#recent', 'received']);
        expect(await ledger.erasePersonalDataOfFinished(new Date(now.getTime() - 30 * DAY))).toBe(0);
      });

      it('never moves a dispatched order back: a late hold or "dispatching" from a worker that lost its lease changes nothing', async () => {
        const { ledger } = await fresh();
        await receive(ledger, '3', new Date('2026-11-01T10:00:00Z'));
        expect(await ledger.setState('dakar-mode:3', 'dispatching', new Date('2026-11-01T10:00:01Z'))).toBe(true);
        expect(await ledger.setState('dakar-mode:3', 'ready', new Date('2026-11-01T10:00:02Z'))).toBe(true);
        expect(
          await ledger.hold(
            'dakar-mode:3',
            { code: 'dispatch_invalid_state', message: 'already ready' },
            new Date('2026-11-01T10:00:03Z'),
          ),
        ).toBe(false);
        expect(await ledger.setState('dakar-mode:3', 'dispatching', new Date('2026-11-01T10:00:04Z'))).toBe(false);
        const record = await ledger.get('dakar-mode:3');
        expect(record).toMatchObject({ state: 'ready', stateChangedAt: '2026-11-01T10:00:02.000Z' });
        expect(record?.hold).toBeUndefined();
        expect(await ledger.listHeld()).toEqual([]);
        // Forward moves still apply.
        expect(await ledger.setState('dakar-mode:3', 'in_delivery', new Date('2026-11-01T11:00:00Z'))).toBe(true);
      });

      it('holds an order before dispatch with its reason, and lists it as held until it moves on', async () => {
        const { ledger } = await fresh();
        await receive(ledger, '4', new Date('2026-11-01T10:00:00Z'));
        expect(
          await ledger.hold(
            'dakar-mode:4',
            { code: 'neighbourhood_not_found', message: 'no neighbourhood in "Rue 10"' },
            new Date('2026-11-01T10:00:01Z'),
          ),
        ).toBe(true);
        expect((await ledger.listHeld()).map((r) => [r.meta.externalOrderId, r.hold?.code])).toEqual([
          ['dakar-mode:4', 'neighbourhood_not_found'],
        ]);
        expect(await ledger.payload('dakar-mode:4')).toEqual({ id: '4' });
        expect(await ledger.setState('dakar-mode:4', 'received', new Date('2026-11-01T10:05:00Z'), 'resolution')).toBe(
          true,
        );
        expect(await ledger.listHeld()).toEqual([]);
        expect((await ledger.get('dakar-mode:4'))?.hold).toBeUndefined();
      });

      it('reads every held order page by page, longest held first, for one shop or all, leaving out those no longer held', async () => {
        const { ledger } = await fresh();
        // Held in the reverse order of their ids, so pages (by id) and the answer (by hold) differ.
        for (const n of [5, 4, 3, 2, 1]) {
          await receive(ledger, `h${n}`, new Date('2026-11-01T10:00:00Z'));
          const at = new Date(Date.parse('2026-11-01T11:00:00Z') - n * 60_000);
          await ledger.hold(`dakar-mode:h${n}`, { code: 'neighbourhood_not_found', message: 'no neighbourhood' }, at);
        }
        await ledger.setState('dakar-mode:h3', 'received', new Date('2026-11-01T12:00:00Z'), 'resolution');
        const ids = (records: { meta: { externalOrderId: string } }[]) => records.map((r) => r.meta.externalOrderId);
        const expected = ['dakar-mode:h5', 'dakar-mode:h4', 'dakar-mode:h2', 'dakar-mode:h1'];
        expect(ids(await allHeldOrders(ledger, { pageSize: 2 }))).toEqual(expected);
        expect(ids(await allHeldOrders(ledger, { shopId: 'dakar-mode', pageSize: 1 }))).toEqual(expected);
        expect(await allHeldOrders(ledger, { shopId: 'another-shop' })).toEqual([]);
        expect(ids(await ledger.listHeldPage({ after: 'dakar-mode:h2', limit: 10 }))).toEqual([
          'dakar-mode:h4',
          'dakar-mode:h5',
        ]);
      });

      it('keeps a held order held against progress (a poll, a step, a repair), and lets only the resolving action move it', async () => {
        const { ledger } = await fresh();
        const at = (minute: number) => new Date(Date.UTC(2026, 10, 1, 10, minute));
        await receive(ledger, '5', at(0));
        await ledger.hold(
          'dakar-mode:5',
          { code: 'cod_amount_mismatch', message: 'carries 5000 XOF, owes 15000' },
          at(1),
        );
        for (const progress of ['awaiting_ready', 'ready', 'in_delivery', 'delivered', 'received'] as const)
          expect(await ledger.setState('dakar-mode:5', progress, at(2))).toBe(false);
        const still = await ledger.get('dakar-mode:5');
        expect([still?.state, still?.hold?.code]).toEqual(['held', 'cod_amount_mismatch']);
        expect(await ledger.setState('dakar-mode:5', 'received', at(4), 'resolution')).toBe(true);
        expect((await ledger.get('dakar-mode:5'))?.hold).toBeUndefined();
      });

      it('never saves a shipment whose markReady was recorded back without it, follows it in flight, and lists it as unready until then', async () => {
        const { ledger } = await fresh();
        await receive(ledger, '5', new Date('2026-11-01T10:00:00Z'));
        const created = { shipmentId: 'shp_5', status: 'CREATED', createdAt: '2026-11-01T10:00:01Z' };
        expect(await ledger.saveShipment('dakar-mode:5', created)).toBe(true);
        expect(await ledger.listInFlight(10)).toEqual([
          { externalOrderId: 'dakar-mode:5', shopId: 'dakar-mode', shipmentId: 'shp_5' },
        ]);
        expect((await ledger.listUnready(new Date(Date.now() + 1000))).map((u) => u.externalOrderId)).toEqual([
          'dakar-mode:5',
        ]);
        expect(await ledger.countUnready(new Date(Date.now() - 60_000))).toBe(0);
        const ready = { ...created, status: 'READY', markedReadyAt: '2026-11-01T10:00:02Z' };
        expect(await ledger.saveShipment('dakar-mode:5', ready)).toBe(true);
        expect(await ledger.countUnready(new Date(Date.now() + 1000))).toBe(0);
        // The late answer of a worker that lost its lease, whatever the state is called.
        expect(await ledger.saveShipment('dakar-mode:5', created)).toBe(false);
        expect(await ledger.saveShipment('dakar-mode:5', { ...created, status: 'SOMETHING_NEW' })).toBe(false);
        expect((await ledger.get('dakar-mode:5'))?.shipment).toMatchObject({
          status: 'READY',
          markedReadyAt: '2026-11-01T10:00:02Z',
        });
        // Later steps (carrying the recorded markReady) and another shipment are saved as they come.
        expect(await ledger.saveShipment('dakar-mode:5', { ...ready, status: 'PICKED_UP' })).toBe(true);
        expect(
          await ledger.saveShipment('dakar-mode:5', {
            shipmentId: 'shp_6',
            status: 'CREATED',
            createdAt: '2026-11-02T10:00:00Z',
          }),
        ).toBe(true);
      });

      it("applies one process's writes about an order in the order they were issued, even when they are not awaited one by one", async () => {
        const { ledger } = await fresh();
        await receive(ledger, '7', new Date('2026-11-01T10:00:00Z'));
        for (let round = 0; round < 5; round += 1) {
          // As a dispatch attempt issues them: several saves, then the state, none awaited before the next.
          const writes: Promise<unknown>[] = [];
          for (let n = 1; n <= 20; n += 1) writes.push(ledger.save('dakar-mode:7', 'door', { round, n }));
          writes.push(ledger.setState('dakar-mode:7', 'dispatching', new Date('2026-11-01T10:00:01Z')));
          const read = ledger.get('dakar-mode:7');
          await Promise.all(writes);
          // The read issued after the writes sees all of them.
          expect([(await read)?.door, (await read)?.state]).toEqual([{ round, n: 20 }, 'dispatching']);
        }
      });
      it("writes one step's parts together (saved parts, shipment, state, timeline lines in order), refusing what setState and saveShipment refuse", async () => {
        const { ledger } = await fresh();
        await receive(ledger, '8', new Date('2026-11-01T10:00:00Z'));
        const id = 'dakar-mode:8';
        const at = (s: number) => new Date(Date.UTC(2026, 10, 1, 10, 0, s));
        const line = (operation: string, s: number) => ({
          at: at(s).toISOString(),
          system: 'dispatch',
          operation,
          outcome: 'ok',
          ms: 20,
        });
        await ledger.apply(id, {
          now: at(1),
          saved: { neighbourhood: { name: 'Sacré-Cœur 3', confidence: 0.9 }, quote: { quoteId: 'q_1', total: 1500 } },
          state: 'dispatching',
          timeline: [line('getShipmentByExternalOrder', 1), line('createQuote', 1)],
        });
        const created = { shipmentId: 'shp_8', status: 'CREATED', createdAt: at(2).toISOString() };
        await ledger.apply(id, {
          now: at(2),
          shipment: created,
          saved: { door: { collect: 9000 } },
          timeline: [line('createShipment', 2)],
        });
        expect((await ledger.listUnready(at(3))).map((u) => u.externalOrderId)).toEqual([id]);
        const ready = { ...created, status: 'READY', markedReadyAt: at(3).toISOString() };
        await ledger.apply(id, { now: at(3), shipment: ready, state: 'ready', timeline: [line('markReady', 3)] });

        const record = (await ledger.get(id))!;
        expect(record.state).toBe('ready');
        expect(record.neighbourhood).toEqual({ name: 'Sacré-Cœur 3', confidence: 0.9 });
        expect(record.quote).toEqual({ quoteId: 'q_1', total: 1500 });
        expect(record.door).toEqual({ collect: 9000 });
        expect(record.shipment).toMatchObject({ status: 'READY', markedReadyAt: at(3).toISOString() });
        expect(await ledger.payload(id)).toBeUndefined();
        expect(await ledger.countUnready(at(4))).toBe(0);
        expect((await ledger.listInFlight(10)).map((o) => o.externalOrderId)).toEqual([id]);
        expect((await ledger.timeline(id)).map((e) => e.operation)).toEqual([
          'webhook orders/create',
          'getShipmentByExternalOrder',
          'createQuote',
          'createShipment',
          'markReady',
        ]);

        // A worker that lost its lease reports its late steps: no move back, no markReady lost, its lines still noted.
        await ledger.apply(id, {
          now: at(5),
          state: 'dispatching',
          shipment: created,
          timeline: [line('createShipment', 5)],
        });
        const after = (await ledger.get(id))!;
        expect(after.state).toBe('ready');
        expect(after.shipment?.markedReadyAt).toBe(at(3).toISOString());
        expect(await ledger.countUnready(at(6))).toBe(0);
        // A final state ends the order's following, as setState does.
        await ledger.apply(id, { now: at(7), state: 'delivered' });
        expect(await ledger.listInFlight(10)).toEqual([]);
        expect((await ledger.get(id))!.state).toBe('delivered');
      });
      it('tells which of many orders have a claim seen, in one read', async () => {
        const { ledger } = await fresh();
        const now = new Date('2026-11-01T12:00:00Z');
        await ledger.saveClaim('dakar-mode:a', { key: 'clm_a', claim: { status: 'OPEN' }, decided: false }, now);
        await ledger.saveClaim('dakar-mode:c', { key: 'clm_c', claim: { status: 'REJECTED' }, decided: true }, now);
        await ledger.saveClaim('dakar-mode:c', { key: 'clm_c2', claim: { status: 'OPEN' }, decided: false }, now);
        const ids = ['dakar-mode:a', 'dakar-mode:b', 'dakar-mode:c', 'dakar-mode:d'];
        expect([...(await ledger.ordersWithClaims(ids))].sort()).toEqual(['dakar-mode:a', 'dakar-mode:c']);
        expect(await ledger.ordersWithClaims([])).toEqual(new Set());
      });
    });

    describe('two workers on one store', () => {
      let first: OrderLedger;
      let second: OrderLedger;
      let stopRaces: () => Promise<void>;
      beforeAll(async () => {
        const under = await start({ retentionDays: 90, timelineLength: 200 });
        first = under.ledger;
        second = under.sibling();
        stopRaces = () => under.stop();
      });
      afterAll(async () => {
        await stopRaces();
      });

      let orders = 0;
      async function newOrder(ledger: OrderLedger): Promise<string> {
        orders += 1;
        const orderId = `race${orders}`;
        await ledger.recordEvent({
          meta: metaOf(orderId),
          payload: { id: orderId },
          now: new Date('2026-11-01T10:00:00Z'),
        });
        return `dakar-mode:${orderId}`;
      }

      it("never takes a dispatched order back to a state before ready (not even awaiting_ready), nor a finished one out of its final state, whatever order two workers' moves land in", async () => {
        const move = fc.record({ worker: fc.constantFrom(0, 1), state: fc.constantFrom(...ORDER_STATES) });
        await fc.assert(
          fc.asyncProperty(fc.array(move, { minLength: 2, maxLength: 8 }), async (moves) => {
            const id = await newOrder(first);
            const ledgers = [first, second];
            const at = new Date('2026-11-01T11:00:00Z');
            // All sent at once: the database decides their order. Each answer says whether that move was applied.
            const applied = await Promise.all(moves.map((m) => ledgers[m.worker]!.setState(id, m.state, at)));
            const appliedStates = moves.filter((_, i) => applied[i]).map((m) => m.state);
            const kept = (await first.get(id))!.state;
            // What is kept is the last move applied, so one of them.
            expect(appliedStates.length === 0 ? ['received'] : appliedStates).toContain(kept);
            // Once a dispatched state was applied, the order never ended before dispatch.
            if (appliedStates.some((s) => DISPATCHED_STATES.has(s))) expect(DISPATCHED_STATES.has(kept)).toBe(true);
            // At most one final state was ever applied, and the order is still in it.
            const finals = new Set(appliedStates.filter((s) => FINAL_STATES.has(s)));
            expect(finals.size).toBeLessThanOrEqual(1);
            if (finals.size === 1) expect(kept).toBe([...finals][0]);
          }),
          { numRuns: 60 },
        );
      });

      it('keeps the markReady one worker recorded when the other saves its late createShipment answer at the same moment', async () => {
        for (let round = 0; round < 40; round += 1) {
          const id = await newOrder(first);
          const created = { shipmentId: `shp_${round}`, status: 'CREATED', createdAt: '2026-11-01T10:00:01Z' };
          await first.saveShipment(id, created);
          const ready = { ...created, status: 'READY', markedReadyAt: '2026-11-01T10:00:02Z' };
          // Sent at the same moment, in alternating order of sending.
          const [late, marked] =
            round % 2 === 0
              ? await Promise.all([second.saveShipment(id, created), first.saveShipment(id, ready)])
              : (await Promise.all([first.saveShipment(id, ready), second.saveShipment(id, created)])).reverse();
          expect(marked).toBe(true);
          const saved = (await first.get(id))!.shipment!;
          // Either order of arrival ends with the markReady kept: the late save was refused, or it landed first.
          expect(saved.markedReadyAt).toBe('2026-11-01T10:00:02Z');
          expect(typeof late).toBe('boolean');
          expect(await first.countUnready(new Date(Date.now() + 60_000))).toBe(0);
        }
      });

      it("keeps an order ready with its markReady when another worker's late step (created shipment, dispatching) is applied at the same moment", async () => {
        for (let round = 0; round < 30; round += 1) {
          const id = await newOrder(first);
          const created = { shipmentId: `shp_step_${round}`, status: 'CREATED', createdAt: '2026-11-01T10:00:01Z' };
          const ready = { ...created, status: 'READY', markedReadyAt: '2026-11-01T10:00:02Z' };
          const now = new Date('2026-11-01T10:00:02Z');
          const marking = () => first.apply(id, { now, shipment: ready, state: 'ready' });
          const late = () => second.apply(id, { now, shipment: created, state: 'dispatching' });
          // Sent at the same moment, in alternating order of sending.
          await Promise.all((round % 2 === 0 ? [marking, late] : [late, marking]).map((send) => send()));
          const record = (await first.get(id))!;
          expect(record.state).toBe('ready');
          expect(record.shipment?.markedReadyAt).toBe('2026-11-01T10:00:02Z');
        }
      });

      it('moves an order to ready once when two workers ask at the same moment, and the loser is told', async () => {
        for (let round = 0; round < 20; round += 1) {
          const id = await newOrder(first);
          await first.setState(id, 'dispatching', new Date('2026-11-01T10:00:01Z'));
          const [a, b] = await Promise.all([
            // The dispatch attempt's move, which may leave a (stale) hold: see OrderLedger.apply.
            first.setState(id, 'ready', new Date('2026-11-01T10:00:02Z'), 'resolution'),
            second.hold(id, { code: 'x', message: 'late' }, new Date('2026-11-01T10:00:02Z')),
          ]);
          const record = (await first.get(id))!;
          // The hold can win only if it landed before "ready"; then "ready" still applies after it. Never held after ready.
          expect(a).toBe(true);
          expect(record.state).toBe('ready');
          expect(record.hold).toBeUndefined();
          expect(typeof b).toBe('boolean');
        }
      });

      it('reports a claim newly decided exactly once, whether its saves come one after another or at the same moment', async () => {
        const now = new Date('2026-11-01T12:00:00Z');
        const open = { key: 'clm_1', claim: { status: 'OPEN' }, decided: false };
        const decided = { key: 'clm_1', claim: { status: 'COMPENSATED' }, decided: true };
        expect(await first.saveClaim('dakar-mode:c1', open, now)).toEqual({ newlyDecided: false });
        expect(await first.saveClaim('dakar-mode:c1', decided, now)).toEqual({ newlyDecided: true });
        expect(await second.saveClaim('dakar-mode:c1', decided, now)).toEqual({ newlyDecided: false });
        // First seen already decided, by two workers at once.
        const both = await Promise.all([
          first.saveClaim('dakar-mode:c2', { ...decided, key: 'clm_2' }, now),
          second.saveClaim('dakar-mode:c2', { ...decided, key: 'clm_2' }, now),
        ]);
        expect(both.filter((r) => r.newlyDecided)).toHaveLength(1);
        expect((await first.knownClaims('dakar-mode:c1')).map((k) => [k.key, k.decided, k.claim])).toEqual([
          ['clm_1', true, { status: 'COMPENSATED' }],
        ]);
      });
    });
  });
}
