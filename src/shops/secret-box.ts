/**
 * Encryption at rest for the secrets Relais keeps in its database (shop access and refresh tokens, webhook
 * secrets, dispatch API keys of connected shops): AES-256-GCM (node:crypto), a fresh 96-bit nonce per value,
 * the shop and the secret's name bound in as associated data (a ciphertext moved to another row does not
 * decrypt).
 *
 * Keys come from RELAIS_SECRET_KEYS: `id:base64key[,id:base64key…]`, each key 32 random bytes
 * (`openssl rand -base64 32`). The first key encrypts; every listed key decrypts, so rotation is: put the new
 * key first, keep the old one after it, run `relais secrets rotate` (re-encrypts every stored secret under the
 * new key), then drop the old key.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { RelaisError } from '../domain/errors.js';

export interface SealedSecret {
  /** The id of the key that sealed it. */
  keyId: string;
  /** nonce (12 bytes) ‖ ciphertext ‖ tag (16 bytes). */
  sealed: Buffer;
}

const NONCE_BYTES = 12;
const TAG_BYTES = 16;
const KEY_ID = /^[A-Za-z0-9_-]{1,32}$/;

/** A key or a sealed value Relais cannot use: trying again with the same keys gets the same answer. */
export class SecretBoxError extends RelaisError {
  override readonly name = 'SecretBoxError';
  constructor(message: string) {
    super({ failure: 'permanent', message });
  }
}

export class SecretBox {
  readonly #keys: Map<string, Buffer>;
  readonly currentKeyId: string;

  constructor(keys: ReadonlyArray<{ id: string; key: Buffer }>) {
    if (keys.length === 0)
      throw new SecretBoxError(
        'no encryption key: set RELAIS_SECRET_KEYS (id:base64 of 32 random bytes; openssl rand -base64 32)',
      );
    this.#keys = new Map();
    for (const { id, key } of keys) {
      if (!KEY_ID.test(id)) throw new SecretBoxError(`key id "${id}" must be 1 to 32 letters, digits, _ or -`);
      if (key.length !== 32)
        throw new SecretBoxError(`key "${id}" is ${key.length} bytes; AES-256 needs 32 (openssl rand -base64 32)`);
      if (this.#keys.has(id)) throw new SecretBoxError(`key id "${id}" is listed twice`);
      this.#keys.set(id, key);
    }
    this.currentKeyId = keys[0]!.id;
  }

  /** RELAIS_SECRET_KEYS as the environment gives it: `id:base64[,id:base64…]`, the first one current. */
  static fromSetting(setting: string): SecretBox {
    const keys = setting
      .split(',')
      .map((part) => part.trim())
      .filter((part) => part.length > 0)
      .map((part) => {
        const colon = part.indexOf(':');
        if (colon <= 0) throw new SecretBoxError('RELAIS_SECRET_KEYS must be id:base64key[,id:base64key…]');
        return { id: part.slice(0, colon), key: Buffer.from(part.slice(colon + 1), 'base64') };
      });
    return new SecretBox(keys);
  }

  seal(plaintext: string, context: string): SealedSecret {
    const nonce = randomBytes(NONCE_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.#keys.get(this.currentKeyId)!, nonce);
    cipher.setAAD(Buffer.from(context, 'utf8'));
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return { keyId: this.currentKeyId, sealed: Buffer.concat([nonce, body, cipher.getAuthTag()]) };
  }

  open(secret: SealedSecret, context: string): string {
    const key = this.#keys.get(secret.keyId);
    if (!key)
      throw new SecretBoxError(
        `a stored secret was sealed with key "${secret.keyId}", which RELAIS_SECRET_KEYS no longer lists`,
      );
    if (secret.sealed.length < NONCE_BYTES + TAG_BYTES) throw new SecretBoxError('a stored secret is truncated');
    const decipher = createDecipheriv('aes-256-gcm', key, secret.sealed.subarray(0, NONCE_BYTES));
    decipher.setAAD(Buffer.from(context, 'utf8'));
    decipher.setAuthTag(secret.sealed.subarray(secret.sealed.length - TAG_BYTES));
    try {
      return Buffer.concat([
        decipher.update(secret.sealed.subarray(NONCE_BYTES, secret.sealed.length - TAG_BYTES)),
        decipher.final(),
      ]).toString('utf8');
    } catch {
      throw new SecretBoxError(
        'a stored secret does not decrypt: wrong key, or it was altered or moved to another row',
      );
    }
  }
}
