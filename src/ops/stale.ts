/**
 * `relais stale`: the orders that never reached a final state (delivered, returned, cancelled) after N days
 * (RELAIS_STALE_AFTER_DAYS, default 30, or --days), which the ledger would otherwise keep for ever; and
 * `relais stale --close <externalOrderId> --reason "..."`, which ends one in Relais only (OrderLedger.closeStale:
 * state `cancelled`, a timeline entry saying who closed it, from which state and why; nothing sent to the
 * delivery service or the shop). It then expires after RELAIS_RETENTION_DAYS like any finished order.
 *
 * Why `cancelled` and not a new state: it is the final state that means "not delivered, nothing more to do",
 * every reader (dashboard, reconciliation, the expiry) already knows it, and the timeline tells it apart from a
 * shop's cancellation. An order with a live shipment is better cancelled at the service first; the list shows
 * each order's state so the operator can tell.
 */
import type { OrderLedger, StaleOrder } from '../ledger/order-ledger.js';

export interface StaleCommandOptions {
  days: number;
  shop?: string;
  json?: boolean;
  close?: string[];
  reason?: string;
  by: string;
  now: Date;
}

/** Runs the command; writes to `out`; answers the exit code (0 done, 1 something refused, 2 bad usage). */
export async function runStaleCommand(
  ledger: OrderLedger,
  options: StaleCommandOptions,
  out: (text: string) => void,
): Promise<number> {
  const firstSeenBefore = new Date(options.now.getTime() - options.days * 86_400_000);
  if (options.close && options.close.length > 0) {
    if (!options.reason?.trim()) {
      out('--close needs --reason "why the order is closed" (it is written on the order\'s timeline)\n');
      return 2;
    }
    let code = 0;
    for (const id of options.close) {
      const result = await ledger.closeStale(id, {
        reason: options.reason.trim(),
        by: options.by,
        now: options.now,
        firstSeenBefore,
      });
      if (result.ok) {
        out(
          `closed ${id} (was ${result.previousState}); its personal data is erased ${String(ledger.retentionDays)} days from now, its amounts and timeline kept\n`,
        );
      } else {
        out(`not closed ${id}: ${result.detail}\n`);
        code = 1;
      }
    }
    return code;
  }
  const stale = await ledger.listStale(firstSeenBefore, options.shop === undefined ? {} : { shopId: options.shop });
  if (options.json) {
    out(`${JSON.stringify(stale, null, 2)}\n`);
  } else if (stale.length === 0) {
    out(`No order without a final state for more than ${String(options.days)} days.\n`);
  } else {
    for (const s of stale) out(`${line(s)}\n`);
    out(
      `\n${String(stale.length)} order(s) with no final state after ${String(options.days)} days (kept until closed). ` +
        'Finish them at the service or the shop, or close one in Relais: relais stale --close <externalOrderId> --reason "..."\n',
    );
  }
  return 0;
}

function line(s: StaleOrder): string {
  const hold = s.holdCode ? ` [${s.holdCode}]` : '';
  return `${s.externalOrderId}  ${s.orderName}  ${s.state}${hold}  first seen ${s.firstSeenAt}, state since ${s.stateChangedAt}`;
}
