/** The shops Relais serves: relais shops and secrets. */
import { Command } from 'commander';
import { readEnv } from '../../config/env.js';
import { defaultSecretSourceFor, readRegistryDocument } from '../../shops/shops.js';
import { prepareImport } from '../../shops/shop-directory.js';
import { PostgresShopDirectory } from '../../adapters/postgres/pg-shops.js';
import { SecretBox } from '../../shops/secret-box.js';
import { createPool } from '../../adapters/postgres/database.js';
import { PostgresShopSecretStore } from '../../adapters/postgres/pg-shop-secrets.js';
import { announceFromCli } from './shared.js';

export function registerShopCommands(program: Command): void {
  shopsCommand(program);
  secretsCommand(program);
}

function shopsCommand(program: Command): void {
  program
    .command('shops')
    .description(
      "Connected shops in the database: `import <file>` moves a registry file's shops there (secrets sealed), `list` shows them",
    )
    .argument('<action>', 'import | list')
    .argument('[file]', 'the registry file to import (import)')
    .action(async (action: string, file: string | undefined) => {
      const env = readEnv();
      if (!env.RELAIS_SECRET_KEYS)
        throw new Error(
          "RELAIS_SECRET_KEYS is not set: connected shops' secrets are sealed with it (openssl rand -base64 32, as id:base64)",
        );
      const pool = createPool({ url: env.DATABASE_URL, schema: env.RELAIS_DB_SCHEMA });
      const directory = new PostgresShopDirectory(pool);
      try {
        if (action === 'list') {
          for (const shop of await directory.list())
            process.stdout.write(`${shop.id}  ${shop.platform}  ${shop.enabled ? 'enabled' : 'disabled'}\n`);
          return;
        }
        if (action !== 'import' || !file) throw new Error('usage: relais shops import <file> | relais shops list');
        const secrets = new PostgresShopSecretStore(pool, SecretBox.fromSetting(env.RELAIS_SECRET_KEYS));
        const prepared = prepareImport(
          readRegistryDocument(file) as { shops: unknown[] },
          defaultSecretSourceFor(process.env),
        );
        for (const shop of prepared) {
          for (const [name, value] of shop.secrets) await secrets.put(shop.id, name, value);
          await directory.save({ id: shop.id, platform: shop.platform, document: shop.document });
          process.stdout.write(`imported ${shop.id} (${shop.platform}), ${shop.secrets.size} secret(s) sealed\n`);
        }
        process.stdout.write(
          `Remove these shops from ${file} (or stop pointing RELAIS_SHOPS_FILE at it): a shop defined in both is refused.\n`,
        );
        process.stdout.write(`${await announceFromCli(env)}\n`);
      } finally {
        await pool.end();
      }
    });
}

function secretsCommand(program: Command): void {
  program
    .command('secrets')
    .description(
      "Connected shops' secrets in the database: `rotate` re-seals every one under the first key of RELAIS_SECRET_KEYS",
    )
    .argument('<action>', 'rotate')
    .action(async (action: string) => {
      if (action !== 'rotate') throw new Error(`unknown action "${action}": rotate`);
      const env = readEnv();
      if (!env.RELAIS_SECRET_KEYS)
        throw new Error(
          'RELAIS_SECRET_KEYS is not set: list the new key first, then the old ones (id:base64,id:base64)',
        );
      const box = SecretBox.fromSetting(env.RELAIS_SECRET_KEYS);
      const pool = createPool({ url: env.DATABASE_URL, schema: env.RELAIS_DB_SCHEMA });
      try {
        const resealed = await new PostgresShopSecretStore(pool, box).reseal();
        process.stdout.write(
          `re-sealed ${resealed} secret(s) under key ${box.currentKeyId}; keys listed after it can now be removed\n`,
        );
      } finally {
        await pool.end();
      }
    });
}
