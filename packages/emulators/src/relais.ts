/**
 * What the emulators take from Relais, in one place. The dependency runs one way: the emulators speak the
 * contract the app reads (the dispatch spec's constants and the wire profile, so an emulated service can talk
 * in any profile's dialect), find the gazetteer the way the app does, and log with its logger. The app never
 * imports this package statically: `relais emulate` and the demo load it with import()
 * (src/main/emulators.ts), so a web or worker process never loads emulator code.
 */
export {
  API_KEY_HEADER,
  CLAIM_ID_PREFIX,
  ID_PREFIX,
  LIST_DEFAULT_LIMIT,
  LIST_MAX_LIMIT,
  OPERATIONS,
  PaymentMode,
  TEST_KEY_PREFIX,
  TRACKING_CODE_LENGTH,
  paths,
  type OperationName,
} from '../../../src/adapters/dispatch-api/wire.js';
export {
  defaultWireProfile,
  loadWireProfile,
  WireProfileError,
  type ErrorMeaning,
  type FieldKey,
  type WireProfile,
} from '../../../src/adapters/dispatch-api/profile.js';
export { setPath } from '../../../src/adapters/dispatch-api/dotted-path.js';
export type { DeliveryStep } from '../../../src/domain/shipment-status.js';
export { findProjectDir } from '../../../src/config/project-files.js';
export { createLogger, silentLogger, type Logger } from '../../../src/log.js';
