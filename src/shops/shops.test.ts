import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { dakarModeShopsDocument } from '../../test/support/factories.js';
import { buildShopRegistry, ShopRegistryError } from './shops.js';
import { shopTimeZone } from './time-zones.js';

const document = dakarModeShopsDocument;
// A live-shaped key generated per run (the registry refuses pk_test_ keys); no credential-shaped string is committed.
const LIVE_KEY = `pk_live_${randomBytes(8).toString('hex')}`;
const secrets = (ref: { env: string } | { file: string } | { stored: string }) =>
  'env' in ref && ref.env === 'K' ? LIVE_KEY : 'a-secret-of-some-length';

function problems(doc: unknown): string[] {
  try {
    buildShopRegistry(doc, secrets);
    return [];
  } catch (error) {
    if (error instanceof ShopRegistryError) return error.problems;
    throw error;
  }
}

describe('the shop registry', () => {
  it("counts the merchant's days in the country's time zone, or in the shop's own, and refuses a zone that does not exist", () => {
    const [shop] = buildShopRegistry(document(), secrets).all();
    expect(shopTimeZone(shop!)).toBe('Africa/Dakar');
    const withZone = document();
    Object.assign(withZone.shops[0]!, { timeZone: 'Africa/Porto-Novo' });
    expect(shopTimeZone(buildShopRegistry(withZone, secrets).all()[0]!)).toBe('Africa/Porto-Novo');
    Object.assign(withZone.shops[0]!, { timeZone: 'Africa/Atlantis' });
    expect(problems(withZone)).toEqual([expect.stringMatching(/timeZone: an IANA time zone, e\.g\. Africa\/Dakar/)]);
  });

  it('refuses markReady "on_shop_signal", which nothing reads, saying why, rather than leave its shipments unready', () => {
    const found = problems(document({}, { markReady: 'on_shop_signal' }));
    expect(found).toEqual([
      expect.stringMatching(/policy\.markReady: only "immediately" is supported: "on_shop_signal" is not built/),
    ]);
  });

  it("lists every problem of a shop's wire profile with the shop it belongs to", () => {
    const found = problems(document({ profile: 'no-such-profile' }));
    expect(found).toEqual([
      expect.stringMatching(
        /^shop dakar-mode: dispatch\.profile "no-such-profile": cannot read .*no-such-profile\.json/,
      ),
    ]);
  });

  it('takes the default wire profile and the customer paying the delivery at the door when the settings name neither', () => {
    const shop = buildShopRegistry(document(), secrets).get('dakar-mode')!;
    expect(shop.dispatch.profile).toBe('default');
    expect(shop.policy.deliveryFeePaidBy).toBe('customer');
  });
});
