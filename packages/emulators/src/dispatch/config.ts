/**
 * JSON configuration for running the emulator as a process (`relais emulate dispatch`).
 *
 * Keys are normally referenced by environment variable name ("apiKeyEnv": "DISPATCH_API_KEY"), so the
 * file can be committed; a literal "apiKeys" list is accepted for local demo keys. The environment is
 * passed in (config/env.ts is the only reader of process.env). Every missing variable is reported at
 * once, by name; values never appear in errors.
 *
 * "profile" names the wire profile the emulator speaks: a built-in name ("default") or a JSON file, a
 * relative path being read from the config file's folder.
 */
import { readFile } from 'node:fs/promises';
import { dirname, isAbsolute, resolve } from 'node:path';
import { z } from 'zod';
import { loadWireProfile, WireProfileError, type WireProfile } from '../relais.js';
import type { DispatchEmulatorOptions, EmulatedOrganisation } from './types.js';

const envName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, { message: 'must be an environment variable name' });

const organisationConfigSchema = z
  .object({
    id: z.string().min(1),
    name: z.string().min(1),
    apiKeys: z.array(z.string().min(1)).optional(),
    apiKeyEnv: z.union([envName, z.array(envName).min(1)]).optional(),
    webhookUrl: z.url().optional(),
    webhookSecret: z.string().min(1).optional(),
    webhookSecretEnv: envName.optional(),
  })
  .strict()
  .refine((o) => (o.apiKeys?.length ?? 0) > 0 || o.apiKeyEnv !== undefined, {
    message: 'needs apiKeyEnv (preferred) or apiKeys',
  });

const emulatorConfigSchema = z
  .object({
    host: z.string().min(1).optional(),
    port: z.number().int().min(0).max(65535).optional(),
    trackingPort: z.number().int().min(0).max(65535).optional(),
    clock: z.enum(['manual', 'realtime']).optional(),
    quoteTtlMs: z.number().int().positive().optional(),
    courierStepMs: z.number().int().positive().optional(),
    responseSpelling: z.enum(['spec', 'snake']).optional(),
    /** Wire profile: built-in name or path to a profile JSON file. */
    profile: z.string().trim().min(1).optional(),
    /** Every run ends this way ('fail' shows the failed-delivery path in a demo). */
    deliveryOutcome: z.enum(['deliver', 'fail']).optional(),
    organisations: z.array(organisationConfigSchema).min(1),
  })
  .strict();

export type EmulatorConfigFile = z.input<typeof emulatorConfigSchema>;

/** A built-in profile name stays a name; a path is read relative to `baseDir` (the config file's folder). */
function loadProfileReference(reference: string, baseDir: string | undefined): WireProfile {
  const isPath = reference.endsWith('.json') || reference.includes('/') || reference.includes('\\');
  const located = isPath && baseDir !== undefined && !isAbsolute(reference) ? resolve(baseDir, reference) : reference;
  try {
    return loadWireProfile(located);
  } catch (error) {
    if (error instanceof WireProfileError)
      throw new Error(`dispatch emulator config: profile ${error.message}`, { cause: error });
    throw error;
  }
}

export function parseEmulatorConfig(
  json: unknown,
  env: Readonly<Record<string, string | undefined>>,
  baseDir?: string,
): DispatchEmulatorOptions {
  const parsed = emulatorConfigSchema.safeParse(json);
  if (!parsed.success) {
    const details = parsed.error.issues.map((i) => `${i.path.join('.') || 'config'}: ${i.message}`).join('; ');
    throw new Error(`dispatch emulator config is invalid: ${details}`);
  }
  const config = parsed.data;
  const missing: string[] = [];
  const fromEnv = (name: string): string | undefined => {
    const value = env[name];
    if (value === undefined || value.trim() === '') {
      missing.push(name);
      return undefined;
    }
    return value.trim();
  };

  const organisations: EmulatedOrganisation[] = config.organisations.map((org) => {
    const keyEnvNames =
      org.apiKeyEnv === undefined ? [] : Array.isArray(org.apiKeyEnv) ? org.apiKeyEnv : [org.apiKeyEnv];
    const apiKeys = [...(org.apiKeys ?? []), ...keyEnvNames.map(fromEnv).filter((k): k is string => k !== undefined)];
    const webhookSecret = org.webhookSecretEnv !== undefined ? fromEnv(org.webhookSecretEnv) : org.webhookSecret;
    return {
      id: org.id,
      name: org.name,
      apiKeys,
      ...(org.webhookUrl === undefined ? {} : { webhookUrl: org.webhookUrl }),
      ...(webhookSecret === undefined ? {} : { webhookSecret }),
    };
  });
  if (missing.length > 0) {
    throw new Error(`dispatch emulator config: missing environment variables: ${[...new Set(missing)].join(', ')}`);
  }

  const { deliveryOutcome, organisations: _ignored, profile, ...rest } = config;
  return {
    ...rest,
    organisations,
    ...(profile === undefined ? {} : { profile: loadProfileReference(profile, baseDir) }),
    ...(deliveryOutcome === undefined ? {} : { deliveryOutcome: () => deliveryOutcome }),
  };
}

export async function loadEmulatorConfig(
  path: string,
  env: Readonly<Record<string, string | undefined>>,
): Promise<DispatchEmulatorOptions> {
  let json: unknown;
  try {
    json = JSON.parse(await readFile(path, 'utf8'));
  } catch (error) {
    const reason = error instanceof SyntaxError ? 'is not valid JSON' : 'cannot be read';
    throw new Error(`dispatch emulator config ${path} ${reason}`, { cause: error });
  }
  return parseEmulatorConfig(json, env, dirname(resolve(path)));
}
