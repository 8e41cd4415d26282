/** Relais on one machine, against the emulators: relais emulate and demo. */
import { Command } from 'commander';
import { rawEnvironment, readEnv } from '../../config/env.js';
import { createLogger } from '../../log.js';
import type { EmulateOptions } from '../emulate.js';
import { onShutdown } from './shared.js';

export function registerEmulatorCommands(program: Command): void {
  emulateCommand(program);
  demoCommand(program);
}

function emulateCommand(program: Command): void {
  program
    .command('emulate')
    .description('Run a local emulator of a remote service: dispatch (the delivery service), shopify or woocommerce')
    .argument('<service>', 'dispatch | shopify | woocommerce')
    .option('--config <file>', 'JSON config (organisations or shops, keys referenced by environment variable)')
    .option('--host <host>', 'address to bind', '127.0.0.1')
    .option('--port <port>', 'port (dispatch default 4010, shopify 4020, woocommerce 4030)', (v) =>
      Number.parseInt(v, 10),
    )
    .option('--tracking-port <port>', 'dispatch: serve public tracking on its own port', (v) => Number.parseInt(v, 10))
    .option('--manual-clock', 'dispatch: couriers move only when told (POST /_emulator/advance)')
    .option('--step-ms <ms>', 'dispatch: time between courier stages in real-time mode (default 5000)', (v) =>
      Number.parseInt(v, 10),
    )
    .option(
      '--profile <file>',
      'dispatch: wire profile (JSON file or built-in name) whose dialect the emulator speaks (default: default)',
    )
    .option(
      '--zone-file <file>',
      'dispatch: the priced places (CSV country,name,band,lat,lon,covers); any other name gets the fallback tariff',
    )
    .option(
      '--product <name:price[:weight[:sku]]>',
      'woocommerce: a product to create in every shop, e.g. "Boubou wax:12500:0.8" (repeatable)',
      (value: string, previous: string[] = []) => [...previous, value],
    )
    .addHelpText('after', '\nConfig file formats, with examples: README, "Emulators: --config files".')
    .action(
      async (
        service: string,
        options: {
          config?: string;
          host: string;
          port?: number;
          trackingPort?: number;
          manualClock?: boolean;
          stepMs?: number;
          profile?: string;
          zoneFile?: string;
          product?: string[];
        },
      ) => {
        const env = readEnv();
        const logger = createLogger({ level: env.LOG_LEVEL, name: `emulate-${service}` });
        const print = (line: string) => process.stdout.write(`${line}\n`);
        const defaults: Record<string, number> = { dispatch: 4010, shopify: 4020, woocommerce: 4030 };
        const common: EmulateOptions = {
          config: options.config,
          host: options.host,
          port: options.port ?? defaults[service] ?? 0,
          trackingPort: options.trackingPort,
          realtime: !options.manualClock,
          stepMs: options.stepMs,
          profile: options.profile,
          ...(options.zoneFile !== undefined ? { zoneFile: options.zoneFile } : {}),
          products: options.product,
        };
        // Loaded only for this command, as the demo below: they load the emulators (src/main/emulators.ts).
        const { emulateDispatch, emulateShopify, emulateWooCommerce } = await import('../emulate.js');
        const start = { dispatch: emulateDispatch, shopify: emulateShopify, woocommerce: emulateWooCommerce }[service];
        if (!start) throw new Error(`unknown service "${service}": dispatch, shopify or woocommerce`);
        const running = await start(common, logger, print);
        onShutdown(() => running.close(), logger);
      },
    );
}

function demoCommand(program: Command): void {
  program
    .command('demo')
    .description(
      'Run Relais end to end on this machine: emulated shops and courier, sample orders, a table of outcomes',
    )
    .option('--once', 'stop after the outcome table')
    .option('--port <port>', 'port of the web process (default: any free port)', (v) => Number.parseInt(v, 10))
    .action(async (options: { once?: boolean; port?: number }) => {
      const env = readEnv();
      const { runDemo } = await import('../demo.js');
      const demo = await runDemo({
        redisUrl: rawEnvironment().REDIS_URL === undefined ? undefined : env.REDIS_URL,
        databaseUrl: rawEnvironment().DATABASE_URL === undefined ? undefined : env.DATABASE_URL,
        port: options.port,
        once: options.once,
        logLevel: env.LOG_LEVEL === 'info' ? 'warn' : env.LOG_LEVEL,
        dashboardToken: env.RELAIS_DASHBOARD_TOKEN,
      });
      if (options.once) {
        await demo.stop();
        process.exit(0);
      }
      process.stdout.write('Relais keeps running; Ctrl-C to stop.\n');
      onShutdown(() => demo.stop(), { info: () => undefined });
    });
}
