/**
 * What an Admin API call's outcome means (admin-request.ts sends, this file judges): an answer with data, a thrown
 * library error, or no token to send become an Attempt, ok or failed with a ShopifyWriteError that says whether
 * trying again can help, how long to wait first, and whether Shopify may have executed the call.
 *
 *  - userErrors: every mutation payload is checked; any userError becomes a non-retryable ShopifyWriteError
 *    carrying them (the writer catches the few cases that only mean "already done", see writer.ts).
 *  - THROTTLED: not executed, retryable after the wait the cost figures give (admin-throttle.ts).
 *  - 429 and 5xx, network errors and timeouts: retryable; a 5xx or no answer may have been executed.
 *  - Validation errors, other HTTP refusals, a revoked token: not retryable.
 */
import {
  GraphqlQueryError,
  HttpRequestError,
  HttpResponseError,
  HttpRetriableError,
  HttpThrottlingError,
} from '@shopify/shopify-api';
import { z } from 'zod';
import { AccessTokenError } from './access-token.js';
import { ShopifyWriteError, type ShopifyUserError, type ShopifyWriteErrorInit } from './admin-errors.js';
import {
  costSchema,
  DEFAULT_RETRY_AFTER_MS,
  retryAfterMsOf,
  secondsToWaitMs,
  throttleWaitMs,
} from './admin-throttle.js';

/**
 * One try of a call. A failed one says whether Shopify executed it (`no`: safe to send again, even a
 * mutation; `maybe`: only a repeatable operation may be) and, when known, how long to wait before another.
 */
export type Attempt =
  { ok: true; data: unknown } | { ok: false; error: ShopifyWriteError; waitMs?: number; executed: 'no' | 'maybe' };

/** A failed attempt, its error built from `init`. */
function failed(executed: 'no' | 'maybe', init: ShopifyWriteErrorInit, waitMs?: number): Attempt {
  return { ok: false, executed, ...(waitMs === undefined ? {} : { waitMs }), error: new ShopifyWriteError(init) };
}

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

/** An answer Shopify gave: its data, or the userErrors of its mutation payloads, or nothing usable. */
export function classifyAnswer(operation: string, data: unknown): Attempt {
  if (data === undefined || data === null) {
    return failed('maybe', { operation, message: `${operation}: Shopify answered without data`, retryable: true });
  }
  const userErrors = collectUserErrors(data);
  if (userErrors.length > 0) {
    const message = `${operation} refused by Shopify: ${userErrors.map(describeUserError).join('; ')}`;
    return failed('maybe', { operation, message, retryable: false, userErrors });
  }
  return { ok: true, data };
}

/** What a thrown library error means: throttled, worth retrying, or refused. */
export function classifyThrown(operation: string, error: unknown): Attempt {
  if (error instanceof GraphqlQueryError) return classifyGraphqlError(operation, error);
  if (error instanceof HttpResponseError) return classifyHttpError(operation, error);
  if (error instanceof HttpRequestError) {
    // No answer at all: refused, reset, timed out. The mutation may or may not have been applied.
    const message = `${operation}: no answer from Shopify`;
    return failed('maybe', { operation, message, retryable: true, cause: error });
  }
  const message = `${operation}: ${messageOf(error)}`;
  return failed('maybe', { operation, message, retryable: true, cause: error });
}

/** No token to send: the call was not made. */
export function classifyTokenFailure(operation: string, error: unknown): Attempt {
  const retryable = error instanceof AccessTokenError ? error.retryable : true;
  const message = `${operation}: ${messageOf(error)}`;
  return failed('no', { operation, message, retryable, ...(retryable ? {} : { status: 401 }), cause: error });
}

/** An answer whose data is not the shape the operation expects. */
export function unexpectedAnswer(operation: string, problem: z.ZodError): ShopifyWriteError {
  return new ShopifyWriteError({
    operation,
    message: `${operation}: unexpected answer from Shopify (${z.prettifyError(problem)})`,
    retryable: false,
  });
}

const graphqlErrorBody = z.object({
  errors: z.object({
    graphQLErrors: z
      .array(
        z
          .object({ message: z.string(), extensions: z.object({ code: z.string().optional() }).loose().optional() })
          .loose(),
      )
      .default([]),
  }),
  extensions: z.object({ cost: costSchema.optional() }).loose().optional(),
});

/** An HTTP 200 carrying GraphQL errors: THROTTLED, Shopify's internal error, or a refusal of the document. */
function classifyGraphqlError(operation: string, error: GraphqlQueryError): Attempt {
  const body = graphqlErrorBody.safeParse(error.body);
  const errors = body.success ? body.data.errors.graphQLErrors : [];
  const codes = errors.map((e) => e.extensions?.code);
  const messages = errors.map((e) => e.message).join('; ') || error.message;
  if (codes.includes('THROTTLED')) {
    const message = `${operation}: throttled by Shopify (THROTTLED)`;
    const cost = body.success ? body.data.extensions?.cost : undefined;
    return failed('no', { operation, message, retryable: true, cause: error }, throttleWaitMs(cost));
  }
  if (codes.includes('INTERNAL_SERVER_ERROR')) {
    return failed('maybe', { operation, message: `${operation}: ${messages}`, retryable: true, cause: error });
  }
  // Validation errors, MAX_COST_EXCEEDED, ACCESS_DENIED...: sending the same document again cannot help.
  const message = `${operation} rejected by Shopify: ${messages}`;
  return failed('no', { operation, message, retryable: false, cause: error });
}

/** An HTTP error status: 429 and 5xx are worth retrying, the others are refusals. */
function classifyHttpError(operation: string, error: HttpResponseError): Attempt {
  if (error instanceof HttpThrottlingError) {
    const retryAfter = error.response.retryAfter;
    const waitMs =
      retryAfter !== undefined && Number.isFinite(retryAfter) ? secondsToWaitMs(retryAfter) : DEFAULT_RETRY_AFTER_MS;
    const message = `${operation}: HTTP 429 from Shopify`;
    return failed('no', { operation, message, retryable: true, status: 429, cause: error }, waitMs);
  }
  const status = error.response.code;
  const message = `${operation}: HTTP ${status} from Shopify`;
  if (error instanceof HttpRetriableError) {
    const waitMs = retryAfterMsOf(error.response.headers);
    return failed('maybe', { operation, message, retryable: true, status, cause: error }, waitMs);
  }
  // 401 (token revoked), 402 (shop frozen), 403 (scope missing), 404 (shop gone), 423 (shop locked)...
  return failed('no', { operation, message, retryable: false, status, cause: error });
}

const userErrorSchema = z.object({
  field: z.array(z.string()).nullable().optional(),
  message: z.string(),
  code: z.string().nullable().optional(),
});

/** Every userErrors list of every mutation field in the answer. */
function collectUserErrors(data: unknown): ShopifyUserError[] {
  if (typeof data !== 'object' || data === null) return [];
  const found: ShopifyUserError[] = [];
  for (const payload of Object.values(data)) {
    if (typeof payload !== 'object' || payload === null || !('userErrors' in payload)) continue;
    const parsed = z.array(userErrorSchema).safeParse((payload as { userErrors: unknown }).userErrors);
    if (!parsed.success) continue;
    for (const e of parsed.data)
      found.push({ field: e.field ?? null, message: e.message, ...(e.code ? { code: e.code } : {}) });
  }
  return found;
}

function describeUserError(error: ShopifyUserError): string {
  return error.field && error.field.length > 0 ? `${error.field.join('.')}: ${error.message}` : error.message;
}
