import { trustProxyOf, validateEdgeSettings } from './edge.settings';
import { itGivesDefaults, itRefusesEach } from '../../test/support/settings';

describe('validateEdgeSettings', () => {
  itGivesDefaults(validateEdgeSettings, {
    HTTP_CONNECTION_TIMEOUT_MS: 30_000,
    HTTP_HEADERS_TIMEOUT_MS: 10_000,
    HTTP_REQUEST_TIMEOUT_MS: 30_000,
    HTTP_KEEP_ALIVE_TIMEOUT_MS: 72_000,
    HTTP_MAX_CONNECTIONS: 10_000,
    HTTP_CONNECTIONS_PER_CLIENT: 256,
    TRUST_PROXY: '',
    CORS_ORIGINS: '',
  });

  itRefusesEach(validateEdgeSettings, [
    ['TRUST_PROXY', '0'],
    ['TRUST_PROXY', 'proxy.example'],
    ['TRUST_PROXY', '10.0.0.0/8,nope'],
    ['HTTP_CONNECTION_TIMEOUT_MS', '0'],
    ['HTTP_HEADERS_TIMEOUT_MS', '99'],
    ['HTTP_REQUEST_TIMEOUT_MS', '600001'],
    ['HTTP_KEEP_ALIVE_TIMEOUT_MS', '5s'],
    ['HTTP_MAX_CONNECTIONS', '0'],
    ['HTTP_CONNECTIONS_PER_CLIENT', '0'],
    ['CORS_ORIGINS', 'https://app.example.com/path'],
  ]);

  it('refuses a header timeout longer than the request timeout (the headers are part of the request)', () => {
    expect(() => validateEdgeSettings({ HTTP_HEADERS_TIMEOUT_MS: '20000', HTTP_REQUEST_TIMEOUT_MS: '15000' })).toThrow(
      /HTTP_HEADERS_TIMEOUT_MS must not exceed HTTP_REQUEST_TIMEOUT_MS/,
    );
    expect(() => validateEdgeSettings({ HTTP_HEADERS_TIMEOUT_MS: '40000' })).toThrow(/HTTP_HEADERS_TIMEOUT_MS/);
    expect(validateEdgeSettings({ HTTP_HEADERS_TIMEOUT_MS: '15000', HTTP_REQUEST_TIMEOUT_MS: '15000' })).toMatchObject({
      HTTP_HEADERS_TIMEOUT_MS: 15_000,
    });
  });

  it('reads TRUST_PROXY as Fastify takes it: off, a hop count, or addresses and CIDRs', () => {
    expect(trustProxyOf(validateEdgeSettings({}))).toBe(false);
    expect(trustProxyOf(validateEdgeSettings({ TRUST_PROXY: '2' }))).toBe(2);
    expect(trustProxyOf(validateEdgeSettings({ TRUST_PROXY: '10.0.0.1, 192.168.0.0/16,::1' }))).toEqual([
      '10.0.0.1',
      '192.168.0.0/16',
      '::1',
    ]);
  });
});
