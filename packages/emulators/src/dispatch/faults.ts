/**
 * Fault injection: rules say which operation (or '*'), for which organisation (optional), how many
 * times (default: forever), and what goes wrong. The first matching rule, in the order added, applies.
 * The gate runs after authentication (a rule can target one organisation) and before the handler, so
 * 'status', 'rate_limit', 'reset' and 'timeout' never cause a side effect, while 'commit_then_drop'
 * lets the handler do its work and then kills the connection instead of answering: the case where a
 * client cannot know whether its createShipment happened.
 */
import type { RequestHandler } from 'express';
import { z } from 'zod';
import { contextOf } from './context.js';
import { HttpError } from './http-errors.js';
import { ErrorCode } from './names.js';
import { OPERATION_NAMES, type FaultKind, type FaultRule, type OperationName } from './types.js';

export const faultKindSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('latency'), ms: z.number().int().min(0).max(600_000) }),
  z.object({ kind: z.literal('status'), status: z.number().int().min(400).max(599) }),
  z.object({ kind: z.literal('rate_limit'), retryAfterSeconds: z.number().int().min(0).max(86_400) }),
  z.object({ kind: z.literal('timeout') }),
  z.object({ kind: z.literal('reset') }),
  z.object({ kind: z.literal('commit_then_drop') }),
]);

export const faultRuleSchema = z.object({
  operation: z.enum([...OPERATION_NAMES, '*']),
  times: z.number().int().positive().optional(),
  fault: faultKindSchema,
  orgId: z.string().min(1).optional(),
});

interface ActiveRule {
  rule: FaultRule;
  remaining: number;
}

export class FaultTable {
  private rules: ActiveRule[] = [];

  /** Throws a ZodError for an invalid rule (the admin endpoint turns it into a 400). */
  add(rule: FaultRule): void {
    const valid = faultRuleSchema.parse(rule);
    this.rules.push({ rule: valid, remaining: valid.times ?? Number.POSITIVE_INFINITY });
  }

  clear(): void {
    this.rules = [];
  }

  /** The fault for this request, if any; counts the hit. */
  take(operation: OperationName, orgId: string | undefined): FaultKind | undefined {
    const active = this.rules.find(
      ({ rule }) =>
        (rule.operation === '*' || rule.operation === operation) && (rule.orgId === undefined || rule.orgId === orgId),
    );
    if (!active) return undefined;
    active.remaining -= 1;
    if (active.remaining <= 0) this.rules = this.rules.filter((r) => r !== active);
    return active.rule.fault;
  }
}

/** Pending 'latency' timers: close() clears them so nothing runs after the emulator stopped. */
export class PendingTimers {
  private readonly timers = new Set<NodeJS.Timeout>();

  after(ms: number, run: () => void): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      run();
    }, ms);
    this.timers.add(timer);
  }

  clear(): void {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
  }
}

export function faultGate(faults: FaultTable, timers: PendingTimers): RequestHandler {
  return (req, res, next) => {
    const context = contextOf(req);
    if (context.record.operation === 'trackingPage' || context.record.operation === 'unknown') return next();
    const fault = faults.take(context.record.operation, context.record.orgId);
    if (!fault) return next();
    context.record.fault = fault.kind;
    switch (fault.kind) {
      case 'latency':
        timers.after(fault.ms, () => next());
        return;
      case 'status':
        // A 4xx is a refusal of the operation in a state that does not allow it; a 5xx a service failure.
        return next(
          fault.status < 500
            ? new HttpError(fault.status, ErrorCode.INVALID_STATE, 'injected fault: refused in this state')
            : new HttpError(fault.status, ErrorCode.INTERNAL_ERROR, 'injected fault: service error'),
        );
      case 'rate_limit':
        return next(
          new HttpError(429, ErrorCode.RATE_LIMITED, 'too many requests', {
            'Retry-After': String(fault.retryAfterSeconds),
          }),
        );
      case 'timeout':
        // Hold the request: no answer ever. The socket is destroyed when the client gives up or on close().
        return;
      case 'reset':
        req.socket.destroy();
        return;
      case 'commit_then_drop': {
        // The handler runs in full; whatever it answers is replaced by a dropped connection.
        const drop = () => {
          req.socket.destroy();
          return res;
        };
        res.json = drop;
        res.send = drop;
        return next();
      }
    }
  };
}
