/**
 * Per-request bookkeeping shared by the middlewares: which operation the route is, which organisation
 * the key belongs to, and the call record that calls() exposes (filled in as the request goes along).
 */
import type { Request, RequestHandler } from 'express';
import type { RecordedCall, RecordedOperation } from './types.js';

export interface RequestContext {
  record: RecordedCall;
}

const contexts = new WeakMap<Request, RequestContext>();

export function contextOf(req: Request): RequestContext {
  const context = contexts.get(req);
  if (!context) throw new Error('request context missing: recordCalls must run first');
  return context;
}

export function setContext(req: Request, context: RequestContext): void {
  contexts.set(req, context);
}

/** Tags the route's operation on the call record. */
export function operation(name: RecordedOperation): RequestHandler {
  return (req, _res, next) => {
    contextOf(req).record.operation = name;
    next();
  };
}
