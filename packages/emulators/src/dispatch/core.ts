/**
 * Everything the routes and the programmatic API share: state, clock, courier, webhooks, faults, and
 * the organisations (keys and webhook settings). Built once per emulator by startDispatchEmulator.
 */
import type { Logger } from '../relais.js';
import type { EmulatorClock } from './clock.js';
import type { ShipmentLifecycle } from './courier.js';
import type { FaultTable, PendingTimers } from './faults.js';
import type { Dialect } from './serialize.js';
import type { EmulatorStore } from './store.js';
import type { EmulatedOrganisation } from './types.js';
import type { WebhookSender, WebhookTarget } from './webhooks.js';
import type { ZoneIndex } from './zones.js';

export class OrganisationRegistry {
  private readonly byId = new Map<string, { name: string; webhook: WebhookTarget }>();
  private readonly byKey = new Map<string, string>();

  constructor(organisations: EmulatedOrganisation[]) {
    for (const org of organisations) {
      this.byId.set(org.id, { name: org.name, webhook: { url: org.webhookUrl, secret: org.webhookSecret } });
      for (const key of org.apiKeys) this.byKey.set(key, org.id);
    }
  }

  orgIdForKey(key: string): string | undefined {
    return this.byKey.get(key);
  }

  has(orgId: string): boolean {
    return this.byId.has(orgId);
  }

  webhookOf(orgId: string): WebhookTarget | undefined {
    return this.byId.get(orgId)?.webhook;
  }

  /** A missing secret keeps the current one, so fixing a receiver URL does not silently drop signing. */
  setWebhook(orgId: string, url: string | undefined, secret?: string): void {
    const org = this.byId.get(orgId);
    if (!org) throw new Error(`unknown organisation ${orgId}`);
    org.webhook = { url, secret: secret ?? org.webhook.secret };
  }
}

export interface EmulatorCore {
  store: EmulatorStore;
  zones: ZoneIndex;
  clock: EmulatorClock;
  lifecycle: ShipmentLifecycle;
  webhooks: WebhookSender;
  faults: FaultTable;
  latencyTimers: PendingTimers;
  organisations: OrganisationRegistry;
  quoteTtlMs: number;
  /** The wire profile's dialect: every body, error and webhook leaves through it. */
  dialect: Dialect;
  logger: Logger;
  /** Known once the tracking server listens. */
  trackingUrl: () => string;
  advance: (ms: number) => Promise<void>;
  runUntilIdle: (maxMs?: number) => Promise<void>;
  decideDispute: (claimId: string, decision: { status: 'COMPENSATED' | 'REJECTED'; outcome: string }) => void;
}
