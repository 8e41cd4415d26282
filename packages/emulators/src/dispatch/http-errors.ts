/**
 * Every error the emulator answers is JSON in its wire profile's shape and words:
 * profile.errorBody(profile.codeFor(meaning) ?? canonical code, message), so `{ "code", "message" }` with
 * the default profile. Routes throw HttpError with one of the emulator's own codes (names.ts ErrorCode); the error middleware maps it, maps Express's body-parser errors (malformed
 * JSON is a 400, an oversized body a 413: never a 500), and turns anything unexpected into a 500 whose
 * message says nothing about internals.
 */
import type { ErrorRequestHandler, RequestHandler, Response } from 'express';
import type { z } from 'zod';
import type { Logger, WireProfile } from '../relais.js';
import { ErrorCode, wireErrorCode } from './names.js';

export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'HttpError';
  }
}

export function sendError(res: Response, profile: WireProfile, status: number, code: ErrorCode, message: string): void {
  res.status(status).json(profile.errorBody(wireErrorCode(profile, code), message));
}

/** Validates with zod; a failure is a 400 VALIDATION_ERROR naming each bad field (never echoing values). */
export function parseOrReject<S extends z.ZodType>(schema: S, value: unknown, what = 'body'): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const details = result.error.issues
    .slice(0, 5)
    .map((issue) => `${issue.path.length > 0 ? issue.path.join('.') : what}: ${issue.message}`)
    .join('; ');
  throw new HttpError(400, ErrorCode.VALIDATION_ERROR, details);
}

export function notFoundRoute(profile: WireProfile): RequestHandler {
  return (req, res) => {
    sendError(res, profile, 404, ErrorCode.NOT_FOUND, `no route for ${req.method} ${req.path}`);
  };
}

/** body-parser tags its errors with `type` and `status`. */
interface BodyParserError {
  type?: unknown;
  status?: unknown;
}

export function errorMiddleware(logger: Logger, profile: WireProfile): ErrorRequestHandler {
  return (error: unknown, _req, res, _next) => {
    if (res.headersSent) {
      res.destroy();
      return;
    }
    if (error instanceof HttpError) {
      res.set(error.headers);
      sendError(res, profile, error.status, error.code, error.message);
      return;
    }
    const tagged = (typeof error === 'object' && error !== null ? error : {}) as BodyParserError;
    switch (tagged.type) {
      case 'entity.parse.failed':
        sendError(res, profile, 400, ErrorCode.MALFORMED_JSON, 'request body is not valid JSON');
        return;
      case 'entity.too.large':
        sendError(res, profile, 413, ErrorCode.PAYLOAD_TOO_LARGE, 'request body is too large');
        return;
      case 'charset.unsupported':
      case 'encoding.unsupported':
        sendError(res, profile, 415, ErrorCode.UNSUPPORTED_MEDIA_TYPE, 'request body must be UTF-8 JSON');
        return;
    }
    if (typeof tagged.status === 'number' && tagged.status >= 400 && tagged.status < 500) {
      sendError(res, profile, tagged.status, ErrorCode.VALIDATION_ERROR, 'request could not be read');
      return;
    }
    logger.error({ err: error }, 'dispatch emulator: unexpected error');
    sendError(res, profile, 500, ErrorCode.INTERNAL_ERROR, 'internal error');
  };
}
