/**
 * Request bodies the emulated service accepts. Bounds the spec leaves "not shown" are chosen here so
 * that absurd input is a 400, never a crash or a silent oddity: weight 0..50 kg (an absent or null
 * weight is a standard parcel), amounts non-negative integers of XOF, texts bounded.
 * Unknown fields are ignored, as a tolerant service does.
 */
import { z } from 'zod';
import { PaymentMode } from '../relais.js';
import { MAX_WEIGHT_KG } from './pricing.js';

const requiredText = (max: number) =>
  z
    .string()
    .max(max)
    .refine((s) => s.trim() !== '', { message: 'must not be empty' });

/** null means "not given": JSON clients often write null for an unknown weight. */
const weightKg = z
  .number()
  .min(0, { message: 'must be between 0 and 50 kg' })
  .max(MAX_WEIGHT_KG, { message: 'must be between 0 and 50 kg' })
  .nullish()
  .transform((v) => v ?? undefined);

/** Spec: "All amounts are in XOF with no sub-unit" — an integer, never a decimal or a string. */
const amountXof = z
  .number()
  .int()
  .min(0)
  .max(1_000_000_000)
  .nullish()
  .transform((v) => v ?? undefined);

const place = z.object({
  /** The neighbourhood. An empty or unknown value is accepted: it is priced with the fallback tariff. */
  city: z.string().max(200),
  address: z.string().max(500),
  coords: z
    .object({ lat: z.number().min(-90).max(90), lng: z.number().min(-180).max(180) })
    .nullish()
    .transform((v) => v ?? undefined),
});

export const quoteRequestSchema = z.object({
  pickup: place,
  dropoff: place,
  parcel: z
    .object({ weight_kg: weightKg })
    .nullish()
    .transform((v) => v ?? undefined),
});

/** The payment mode, read from the field the wire profile names (requests.paymentModeField). */
export const paymentModeSchema = z.enum(Object.values(PaymentMode) as [PaymentMode, ...PaymentMode[]]).optional();

export const createShipmentSchema = z
  .object({
    quote_id: requiredText(200),
    external_order_id: requiredText(255),
    orderAmountXof: amountXof, // spec spelling
    order_amount_xof: amountXof, // accepted too: the spec also says every body is snake_case
  })
  .refine(
    (b) =>
      b.orderAmountXof === undefined || b.order_amount_xof === undefined || b.orderAmountXof === b.order_amount_xof,
    { message: 'orderAmountXof and order_amount_xof disagree', path: ['orderAmountXof'] },
  )
  .transform((b) => ({
    quoteId: b.quote_id,
    externalOrderId: b.external_order_id,
    orderAmountXof: b.orderAmountXof ?? b.order_amount_xof,
  }));

export const markReadySchema = z.object({ by: requiredText(200) });

export const cancelSchema = z.object({ reason: requiredText(1000), by: requiredText(200) });

export const openDisputeSchema = z.object({
  reason: requiredText(200),
  description: requiredText(5000),
  claimant_id: requiredText(200),
  claimant_type: requiredText(50).optional(),
});

export const simulatePriceSchema = z.object({
  pickup_city: z.string().max(200),
  dropoff_city: z.string().max(200),
  weight_kg: weightKg,
});

export const listQuerySchema = z.object({
  status: z.string().optional(),
  cursor: z.string().optional(),
  limit: z
    .string()
    .regex(/^\d{1,4}$/, { message: 'must be an integer between 1 and 100' })
    .optional(),
});
