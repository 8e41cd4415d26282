/**
 * The one error the Shopify Admin client throws (admin.ts): what a failed call means for the job that made it.
 */
import { failureOf, RelaisError } from '../../domain/errors.js';

export interface ShopifyUserError {
  field: string[] | null;
  message: string;
  code?: string | null;
}

export interface ShopifyWriteErrorInit {
  operation: string;
  message: string;
  retryable: boolean;
  retryAfterMs?: number;
  status?: number;
  userErrors?: ShopifyUserError[];
  cause?: unknown;
}

/**
 * What a failed Admin API call means for the job: `retryable` (try the whole job again later, after
 * `retryAfterMs` when known) or not (the shop refused: userErrors, an invalid document, a revoked token).
 * Messages name the operation and Shopify's own error messages; never a token or a header.
 */
export class ShopifyWriteError extends RelaisError {
  override readonly name = 'ShopifyWriteError';
  readonly operation: string;
  readonly status?: number;
  readonly userErrors: ShopifyUserError[];

  constructor(init: ShopifyWriteErrorInit) {
    super({
      failure: failureOf(init.retryable),
      message: init.message,
      retryAfterMs: init.retryAfterMs,
      cause: init.cause,
    });
    this.operation = init.operation;
    this.userErrors = init.userErrors ?? [];
    if (init.status !== undefined) this.status = init.status;
  }
}
