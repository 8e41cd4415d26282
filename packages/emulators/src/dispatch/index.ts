/**
 * Dispatch emulator: a faithful, standalone, in-memory server of the dispatch service described in
 * docs/dispatch-api-spec.md, for tests, demos and merchants who want to try Relais safely
 * (the real service has no test keys). Its programmatic API is the DispatchEmulator interface in types.ts.
 *
 *   startDispatchEmulator(options: DispatchEmulatorOptions): Promise<DispatchEmulator>
 *     Starts the service on 127.0.0.1 (random port by default) and resolves once it listens.
 *     `baseUrl` serves /v1/... and /_emulator/...; `trackingUrl` serves the public operations and the
 *     tracking page /t/:code (a separate port when `trackingPort` is given). Close it with close().
 *
 *   loadEmulatorConfig(path: string, env: Readonly<Record<string, string | undefined>>):
 *       Promise<DispatchEmulatorOptions>
 *     Reads a JSON config of organisations (keys by env var name or literal), for `relais emulate dispatch`:
 *       { "port": 4010, "trackingPort": 4011, "clock": "realtime", "courierStepMs": 2000,
 *         "organisations": [ { "id": "org_demo", "name": "Demo shop", "apiKeyEnv": "DISPATCH_API_KEY",
 *                              "webhookUrl": "http://127.0.0.1:3000/webhooks/dispatch/demo",
 *                              "webhookSecretEnv": "DISPATCH_WEBHOOK_SECRET" } ] }
 *   parseEmulatorConfig(json: unknown, env): DispatchEmulatorOptions — the same, from an object.
 *
 * Behaviour in short: X-Api-Key auth (pk_test_ → 403 SANDBOX_KEY_NOT_SUPPORTED, missing/unknown → 401);
 * tenant isolation (another organisation's objects are 404); zone pricing from the neighbourhood
 * gazetteer with a fallback tariff for city names (pricing.ts has the table); quotes expire on the
 * emulator clock; a simulated courier that only moves READY shipments; signed webhooks with retries;
 * fault injection per operation; every error a JSON {code, message}.
 *
 * Dialect: `profile` (a WireProfile, default defaultWireProfile()) decides every name the spec leaves
 * unshown, on the wire only: state names, error codes and the error body, the webhook's header, signature
 * and body, the spellings of uncertain fields, the payment-mode request field. Inside (and in shipments(),
 * the admin endpoints and calls()) the emulator keeps its own names (names.ts).
 */
import { z } from 'zod';
import { defaultWireProfile, silentLogger, TEST_KEY_PREFIX } from '../relais.js';
import { EmulatorClock } from './clock.js';
import { OrganisationRegistry, type EmulatorCore } from './core.js';
import { ShipmentLifecycle } from './courier.js';
import { FaultTable, PendingTimers } from './faults.js';
import { Dialect, snapshot } from './serialize.js';
import { buildApps, DEFAULT_BODY_LIMIT_BYTES, listen, type ClosableServer } from './server.js';
import { EmulatorStore } from './store.js';
import type { DispatchEmulator, DispatchEmulatorOptions, RecordedCall } from './types.js';
import { WebhookSender } from './webhooks.js';
import { loadZoneIndex, normaliseName } from './zones.js';
import { loadZoneFile } from './zone-file.js';

export type {
  DeliveryOutcome,
  DispatchEmulator,
  DispatchEmulatorOptions,
  EmulatedClaim,
  EmulatedOrganisation,
  EmulatedShipmentSnapshot,
  FaultKind,
  FaultRule,
  OperationName,
  RecordedCall,
  RecordedOperation,
  StatusEvent,
  WebhookDelivery,
} from './types.js';
export { OPERATION_NAMES } from './types.js';
export {
  ErrorCode,
  KNOWN_SHIPMENT_STATES,
  PAYMENT_MODE_FIELD,
  WEBHOOK_EVENT_STATUS_CHANGED,
  WEBHOOK_SIGNATURE_HEADER,
  stateFromWire,
  wireErrorCode,
  wireState,
  type ShipmentState,
} from './names.js';
export { loadEmulatorConfig, parseEmulatorConfig } from './config.js';
export { signWebhookBody, WEBHOOK_MAX_ATTEMPTS, WEBHOOK_RETRY_DELAYS_MS } from './webhooks.js';
export {
  COD_FEE_XOF,
  FALLBACK_TARIFF_XOF,
  FALLBACK_ZONE_ID,
  STANDARD_PARCEL_KG,
  WEIGHT_BANDS,
  ZONE_TARIFF_XOF,
} from './pricing.js';
export { normaliseName } from './zones.js';
export { parseZoneFile, ZONE_FILE_HEADER } from './zone-file.js';

export const DEFAULT_QUOTE_TTL_MS = 15 * 60_000;
export const DEFAULT_COURIER_STEP_MS = 60_000;
/** runUntilIdle's default bound: a day of emulated time is more than any run plus its webhook retries. */
export const DEFAULT_RUN_UNTIL_IDLE_MS = 24 * 3_600_000;

const organisationsSchema = z
  .array(
    z.object({
      id: z.string().min(1),
      name: z.string(),
      apiKeys: z.array(z.string().min(1)),
      webhookUrl: z.url().optional(),
      webhookSecret: z.string().min(1).optional(),
    }),
  )
  .superRefine((orgs, ctx) => {
    const ids = new Set<string>();
    const keys = new Set<string>();
    orgs.forEach((org, i) => {
      if (ids.has(org.id))
        ctx.addIssue({ code: 'custom', path: [i, 'id'], message: `duplicate organisation id ${org.id}` });
      ids.add(org.id);
      org.apiKeys.forEach((key, k) => {
        // Messages name the position, never the key itself.
        if (key.startsWith(TEST_KEY_PREFIX)) {
          ctx.addIssue({
            code: 'custom',
            path: [i, 'apiKeys', k],
            message: `a ${TEST_KEY_PREFIX} key could never authenticate: the service refuses sandbox keys with 403`,
          });
        }
        if (keys.has(key))
          ctx.addIssue({
            code: 'custom',
            path: [i, 'apiKeys', k],
            message: 'key used twice: a key belongs to one organisation',
          });
        keys.add(key);
      });
    });
  });

function validateOptions(options: DispatchEmulatorOptions): void {
  const result = organisationsSchema.safeParse(options.organisations);
  if (!result.success) {
    const details = result.error.issues.map((i) => `organisations.${i.path.join('.')}: ${i.message}`).join('; ');
    throw new Error(`dispatch emulator: invalid organisations: ${details}`);
  }
  for (const [name, value] of Object.entries({
    quoteTtlMs: options.quoteTtlMs,
    courierStepMs: options.courierStepMs,
  })) {
    if (value !== undefined && !(Number.isFinite(value) && value > 0)) {
      throw new Error(`dispatch emulator: ${name} must be a positive number of milliseconds`);
    }
  }
}

function urlHost(host: string): string {
  return host.includes(':') ? `[${host}]` : host;
}

export async function startDispatchEmulator(options: DispatchEmulatorOptions): Promise<DispatchEmulator> {
  validateOptions(options);
  const logger = (options.logger ?? silentLogger).child({ component: 'dispatch-emulator' });
  const host = options.host ?? '127.0.0.1';
  const gazetteerZones = options.zoneFile
    ? await loadZoneFile(options.zoneFile)
    : await loadZoneIndex(options.gazetteerDir);
  // A real service's zone list is not the gazetteer: the names it leaves out fall to the fallback tariff.
  const unpriced = new Set((options.unpricedNeighbourhoods ?? []).map(normaliseName));
  const zones =
    unpriced.size === 0
      ? gazetteerZones
      : {
          ...gazetteerZones,
          candidates: (name: string) => (unpriced.has(normaliseName(name)) ? [] : gazetteerZones.candidates(name)),
        };

  const organisations = new OrganisationRegistry(options.organisations);
  const store = new EmulatorStore();
  const faults = new FaultTable();
  const latencyTimers = new PendingTimers();
  const calls: RecordedCall[] = [];
  // The clock awaits the webhooks after each task (only ever called once `sender` exists);
  // the sender needs the clock for its retries.
  const clock: EmulatorClock = new EmulatorClock(
    options.clock ?? 'manual',
    (error) => logger.error({ err: error }, 'dispatch emulator: scheduled task failed'),
    (): Promise<void> => sender.idle(),
  );
  const profile = options.profile ?? defaultWireProfile();
  const sender: WebhookSender = new WebhookSender(clock, (orgId) => organisations.webhookOf(orgId), logger, profile);
  const lifecycle = new ShipmentLifecycle(
    clock,
    sender,
    options.courierStepMs ?? DEFAULT_COURIER_STEP_MS,
    options.deliveryOutcome ?? (() => 'deliver'),
    logger,
  );

  let trackingUrl = '';
  const advance = async (ms: number) => {
    await sender.idle();
    await clock.advance(ms);
    await sender.idle();
  };
  const runUntilIdle = async (maxMs = DEFAULT_RUN_UNTIL_IDLE_MS) => {
    const deadline = clock.now() + maxMs;
    await sender.idle();
    // Bounded twice: by emulated time, and by a step count in case tasks keep rescheduling at zero delay.
    for (let steps = 0; steps < 100_000; steps++) {
      const next = clock.nextDueAt();
      if (next === undefined || next > deadline) return;
      await advance(Math.max(0, next - clock.now()));
    }
  };
  const decideDispute: EmulatorCore['decideDispute'] = (claimId, decision) => {
    const found = store.claim(claimId);
    if (!found) throw new Error(`unknown claim ${claimId}`);
    if (found.claim.status !== 'OPEN') throw new Error(`claim ${claimId} is already ${found.claim.status}`);
    found.claim.status = decision.status;
    found.claim.outcome = decision.outcome;
    found.claim.decided_at = new Date(clock.now()).toISOString();
  };

  const core: EmulatorCore = {
    store,
    zones,
    clock,
    lifecycle,
    webhooks: sender,
    faults,
    latencyTimers,
    organisations,
    quoteTtlMs: options.quoteTtlMs ?? DEFAULT_QUOTE_TTL_MS,
    dialect: new Dialect(profile, options.responseSpelling ?? 'spec'),
    logger,
    trackingUrl: () => trackingUrl,
    advance,
    runUntilIdle,
    decideDispute,
  };

  const separateTracking = options.trackingPort !== undefined;
  const apps = buildApps(core, calls, {
    separateTracking,
    bodyLimitBytes: options.bodyLimitBytes ?? DEFAULT_BODY_LIMIT_BYTES,
  });
  const servers: ClosableServer[] = [];
  try {
    servers.push(await listen(apps.main, host, options.port ?? 0));
    if (apps.tracking) servers.push(await listen(apps.tracking, host, options.trackingPort ?? 0));
  } catch (error) {
    await Promise.all(servers.map((s) => s.close()));
    clock.close();
    throw error;
  }
  const [mainServer, trackingServer] = servers;
  if (!mainServer) throw new Error('dispatch emulator: main server did not start');
  const baseUrl = `http://${urlHost(host)}:${mainServer.port}`;
  trackingUrl = trackingServer ? `http://${urlHost(host)}:${trackingServer.port}` : baseUrl;
  logger.info(
    { baseUrl, trackingUrl, clock: clock.mode, profile: profile.name, organisations: options.organisations.length },
    'dispatch emulator listening',
  );

  let closing: Promise<void> | undefined;
  return {
    baseUrl,
    trackingUrl,
    now: () => new Date(clock.now()),
    advance,
    runUntilIdle,
    faults: { add: (rule) => faults.add(rule), clear: () => faults.clear() },
    shipments: (orgId) => store.listShipments(orgId).map((s) => snapshot(s, trackingUrl)),
    calls: () => calls.map((c) => ({ ...c })),
    webhookDeliveries: () => sender.deliveries(),
    decideDispute,
    setOrganisationWebhook: (orgId, url, secret) => organisations.setWebhook(orgId, url, secret),
    close() {
      closing ??= (async () => {
        clock.close();
        latencyTimers.clear();
        await Promise.all([...servers.map((s) => s.close()), sender.close()]);
        logger.info('dispatch emulator closed');
      })();
      return closing;
    },
  };
}
