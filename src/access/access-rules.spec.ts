import { digestOf, KeyGrant, parseConfiguredKeys, refusalOf, storedGrantOf } from './access-rules';

const grant = (scopes: KeyGrant['scopes'], prefixes: string[] = []): KeyGrant => ({
  name: 'k',
  scopes,
  prefixes,
  source: 'config',
});

describe('access rules', () => {
  describe('API_KEYS entries', () => {
    it('reads a bare secret as read+write, and scopes and prefixes when given', () => {
      const [bare, writer, limited] = parseConfiguredKeys(
        'secret-one-0123456789, secret-two-0123456789:write ,secret-3-0123456789:read+write:eu.|asia.',
      );
      expect([...bare.grant.scopes]).toEqual(['read', 'write']);
      expect(bare.digest).toBe(digestOf('secret-one-0123456789'));
      expect(bare.grant.name).toBe(`config:${bare.digest.slice(0, 12)}`);
      expect([...writer.grant.scopes]).toEqual(['write']);
      expect(writer.grant.prefixes).toEqual([]);
      expect([...limited.grant.scopes]).toEqual(['read', 'write']);
      expect(limited.grant.prefixes).toEqual(['eu.', 'asia.']);
    });

    it.each([
      ['short', 'too short'],
      ['secret-0123456789:root', 'unknown scope'],
      ['secret-0123456789:read+', 'empty scope'],
      ['secret-0123456789:read:', 'empty prefix list'],
      ['secret-0123456789:read:a||b', 'empty prefix'],
      ['has space 0123456789abc', 'space in the secret'],
      ['secret-0123456789:read+admin:eu.', 'an admin key limited to prefixes'],
    ])('refuses %j (%s), naming the entry by position only', (value) => {
      expect(() => parseConfiguredKeys(`good-secret-0123456789,${value}`)).toThrow(/^entry 2 /);
    });

    it('takes an empty value as no keys', () => {
      expect(parseConfiguredKeys('')).toEqual([]);
      expect(parseConfiguredKeys(' , ')).toEqual([]);
    });
  });

  describe('refusalOf', () => {
    it('needs the scope', () => {
      expect(refusalOf(grant(new Set(['read'])), 'write', 'b')).toEqual({ reason: 'scope', scope: 'write' });
      expect(refusalOf(grant(new Set(['read', 'write'])), 'write', 'b')).toBeUndefined();
      expect(refusalOf(grant(new Set(['write'])), 'admin', undefined)).toEqual({ reason: 'scope', scope: 'admin' });
    });

    it('limits a key with prefixes to the names that start with one, and keeps it off lists', () => {
      const limited = grant(new Set(['read', 'write']), ['eu.', 'asia.']);
      expect(refusalOf(limited, 'write', 'eu.posts')).toBeUndefined();
      expect(refusalOf(limited, 'read', 'asia.tags')).toBeUndefined();
      expect(refusalOf(limited, 'write', 'us.posts')).toEqual({ reason: 'prefix', prefixes: ['eu.', 'asia.'] });
      expect(refusalOf(limited, 'read', undefined)).toEqual({ reason: 'prefix', prefixes: ['eu.', 'asia.'] });
    });

    it('refuses every admin route to an admin key limited to prefixes (one stored by an older version)', () => {
      const prefixedAdmin = grant(new Set(['admin']), ['eu.']);
      expect(refusalOf(prefixedAdmin, 'admin', 'eu.posts')).toEqual({ reason: 'prefixedAdmin' });
      expect(refusalOf(prefixedAdmin, 'admin', undefined)).toEqual({ reason: 'prefixedAdmin' });
      expect(refusalOf(grant(new Set(['admin'])), 'admin', undefined)).toBeUndefined();
    });
  });

  describe('stored keys', () => {
    const digest = 'a'.repeat(64);
    it('reads what the service stores', () => {
      const stored = JSON.stringify({ digest, scopes: ['write'], prefixes: ['x'], createdAtSec: 5 });
      expect(storedGrantOf('ingest', stored)).toEqual({
        digest,
        grant: { name: 'ingest', scopes: new Set(['write']), prefixes: ['x'], source: 'redis', createdAtSec: 5 },
      });
    });

    it.each([
      ['not json', '{'],
      ['no digest', JSON.stringify({ scopes: [], prefixes: [], createdAtSec: 1 })],
      ['a bad scope', JSON.stringify({ digest, scopes: ['root'], prefixes: [], createdAtSec: 1 })],
      ['prefixes not strings', JSON.stringify({ digest, scopes: [], prefixes: [1], createdAtSec: 1 })],
      ['null', 'null'],
    ])('ignores a value with %s', (_, stored) => {
      expect(storedGrantOf('x', stored)).toBeUndefined();
    });
  });
});
