/** The body parsers of the dashboard's forms: small, flat (no nested keys), and bounded. */
import express from 'express';

export const form = express.urlencoded({ extended: false, limit: '16kb', parameterLimit: 20 });

/** A dispute's description may be 4000 characters of accented text: up to 9 bytes each once form-encoded. */
export const disputeForm = express.urlencoded({ extended: false, limit: '64kb', parameterLimit: 20 });

/** A form field as the body parser left it (a string, or undefined when absent): the use case checks it. */
export const field = (body: unknown, name: string): unknown => (body as Record<string, unknown> | undefined)?.[name];
