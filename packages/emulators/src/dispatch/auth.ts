/**
 * X-Api-Key authentication (spec section 5). Order matters: a pk_test_ key is refused with 403
 * SANDBOX_KEY_NOT_SUPPORTED before any lookup, so even an unknown sandbox key gets the explanation the
 * real service gives. Missing or unknown keys get 401. No message ever repeats the key.
 */
import type { RequestHandler } from 'express';
import { API_KEY_HEADER, TEST_KEY_PREFIX } from '../relais.js';
import { contextOf } from './context.js';
import { HttpError } from './http-errors.js';
import { ErrorCode } from './names.js';

export function authenticate(orgIdForKey: (key: string) => string | undefined): RequestHandler {
  return (req, _res, next) => {
    const key = req.get(API_KEY_HEADER)?.trim();
    if (!key) return next(new HttpError(401, ErrorCode.UNAUTHORIZED, `missing ${API_KEY_HEADER} header`));
    if (key.startsWith(TEST_KEY_PREFIX)) {
      return next(
        new HttpError(
          403,
          ErrorCode.SANDBOX_KEY_NOT_SUPPORTED,
          `sandbox keys (${TEST_KEY_PREFIX}...) are not supported: the service has no test mode`,
        ),
      );
    }
    const orgId = orgIdForKey(key);
    if (!orgId) return next(new HttpError(401, ErrorCode.UNAUTHORIZED, 'unknown API key'));
    contextOf(req).record.orgId = orgId;
    next();
  };
}

/** The organisation of an authenticated request (routes only run after authenticate). */
export function orgOf(req: Parameters<RequestHandler>[0]): string {
  const orgId = contextOf(req).record.orgId;
  if (!orgId) throw new Error('route reached without authentication');
  return orgId;
}
