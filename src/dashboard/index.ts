/** The dashboard's public surface: the router createApp mounts, and what the web process wires into it. */
export { dashboardRoutes } from './router.js';
export { RedisSessionRevocations } from './auth.js';
export type {
  DashboardDeps,
  DisputesPort,
  ReconciliationDay,
  ReconciliationShopSummary,
  ReconciliationSummary,
  ReconciliationSummaryStore,
  SessionRevocations,
} from './ports.js';
