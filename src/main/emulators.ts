/**
 * The emulators of the dispatch service, Shopify and WooCommerce are the workspace package @relais/emulators
 * (packages/emulators), which the app never imports statically: `relais emulate` and `relais demo` load the one
 * they need here, with import(), when the command runs. So a web or worker process never loads emulator code,
 * and an installation without the package (the production image) runs every other command.
 *
 * The package is TypeScript sources, run by tsx (`npm run relais`, `npm run demo`) and by the tests: from a
 * checkout with its dev dependencies (`npm ci`).
 */
export const loadDispatchEmulator = () => load(() => import('@relais/emulators/dispatch'));
export const loadShopifyEmulator = () => load(() => import('@relais/emulators/shopify'));
export const loadWooEmulator = () => load(() => import('@relais/emulators/woocommerce'));

async function load<T>(importing: () => Promise<T>): Promise<T> {
  try {
    return await importing();
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    // Not installed (`npm ci --omit=dev`), or found but not runnable as it is (plain node on the .ts sources).
    if (code === 'ERR_MODULE_NOT_FOUND' || code === 'ERR_UNKNOWN_FILE_EXTENSION') {
      throw new Error(
        `the emulators (packages/emulators) cannot be loaded here: ${(error as Error).message}\n` +
          'They run from a checkout with its dev dependencies: npm ci, then npm run relais -- emulate <service>, or npm run demo.',
        { cause: error },
      );
    }
    throw error;
  }
}
