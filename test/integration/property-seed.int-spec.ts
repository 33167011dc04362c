import fc from 'fast-check';
import { DEFAULT_PROPERTY_SEED, propertySeed } from '../support/property-seed';

describe('the seed of the fast-check properties', () => {
  it('is fixed unless FC_SEED names another one or asks for random seeds', () => {
    expect(propertySeed({})).toBe(DEFAULT_PROPERTY_SEED);
    expect(propertySeed({ FC_SEED: '-790487553' })).toBe(-790_487_553);
    expect(propertySeed({ FC_SEED: 'random' })).toBeUndefined();
    expect(() => propertySeed({ FC_SEED: '1.5' })).toThrow(/FC_SEED/);
  });

  it('is set for this run as FC_SEED asks', () => {
    expect(fc.readConfigureGlobal().seed).toBe(propertySeed(process.env));
  });
});
