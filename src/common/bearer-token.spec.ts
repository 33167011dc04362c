import { BearerToken } from './bearer-token';

describe('BearerToken', () => {
  const token = new BearerToken('the-secret-token-0123');

  it.each([
    [undefined, 'missing'],
    ['the-secret-token-0123', 'missing'],
    ['Basic dGhlLXNlY3JldA==', 'missing'],
    ['Bearer ', 'missing'],
    [['Bearer the-secret-token-0123'], 'missing'],
    ['Bearer the-secret-token-012', 'wrong'],
    ['Bearer the-secret-token-01234', 'wrong'],
    ['Bearer the-secret-token-0123', 'ok'],
    ['bearer the-secret-token-0123', 'ok'],
  ] as const)('%j is %s', (header, verdict) => {
    expect(token.check(header as string | string[] | undefined)).toBe(verdict);
  });
});
