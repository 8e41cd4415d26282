/**
 * Runs the WooCommerce emulator on its own, for a merchant or a demo to point Relais at:
 *
 *   npx tsx packages/emulators/src/woocommerce/cli.ts --config woo-emulator.json [--port 8090]
 *
 * The config file names the shops and their API keys (kept out of the command line and out of the output):
 *   { "shops": [{ "id": "dakar-wax", "consumerKey": "ck_...", "consumerSecret": "cs_...", "weightUnit": "kg" }],
 *     "seed": { "products": [{ "name": "Boubou wax", "price": "12500", "weight": "0.8" }] } }
 * Binds 127.0.0.1; stops cleanly on SIGINT/SIGTERM.
 */
import { readFileSync } from 'node:fs';
import { Command } from 'commander';
import { z } from 'zod';
import { createLogger } from '../relais.js';
import { startWooEmulator } from './server.js';

const configSchema = z.object({
  shops: z
    .array(
      z.object({
        id: z.string(),
        consumerKey: z.string(),
        consumerSecret: z.string(),
        weightUnit: z.enum(['kg', 'g', 'lbs', 'oz']).optional(),
        currency: z.string().optional(),
        priceDecimals: z.number().int().optional(),
      }),
    )
    .min(1),
  seed: z
    .object({
      products: z
        .array(
          z.object({
            name: z.string(),
            price: z.string().optional(),
            weight: z.string().optional(),
            sku: z.string().optional(),
          }),
        )
        .optional(),
    })
    .optional(),
});

const program = new Command()
  .name('woo-emulator')
  .description('A local WooCommerce (wc/v3 REST API and webhooks) for trying Relais without a real shop.')
  .requiredOption('--config <file>', 'JSON file with the shops and their API keys')
  .option('--port <port>', 'port to listen on (default: any free port)', (value) => Number.parseInt(value, 10))
  .option('--host <host>', 'address to bind', '127.0.0.1')
  .action(async (options: { config: string; port?: number; host: string }) => {
    const logger = createLogger({ name: 'woo-emulator' });
    const config = configSchema.parse(JSON.parse(readFileSync(options.config, 'utf8')));
    const emulator = await startWooEmulator({
      shops: config.shops,
      ...(options.port !== undefined ? { port: options.port } : {}),
      host: options.host,
      logger,
    });
    for (const shop of config.shops) {
      for (const product of config.seed?.products ?? []) await emulator.createProduct(shop.id, product);
      logger.info({ shop: shop.id, siteUrl: emulator.siteUrl(shop.id) }, 'shop ready');
    }
    let closing = false;
    const stop = () => {
      if (closing) return;
      closing = true;
      emulator.close().then(
        () => process.exit(0),
        () => process.exit(1),
      );
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });

await program.parseAsync(process.argv);
