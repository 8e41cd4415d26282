/**
 * Disputes (claims) on an order's shipment, for the command line and the dashboard: see disputes.ts.
 */
export {
  DEFAULT_CLAIMANT_TYPE,
  knownDisputes,
  listDisputesForOrder,
  openDisputeForOrder,
  recordClaims,
  type DisputeRuntime,
  type DisputeView,
  type ListDisputesResult,
  type OpenDisputeInput,
  type OpenDisputeResult,
} from './disputes.js';
