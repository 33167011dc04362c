import { trustProxyOf, validateConfig } from './config';

describe('validateConfig', () => {
  it('gives the documented defaults for an empty environment', () => {
    const config = validateConfig({});
    expect(config).toMatchObject({
      PORT: 3000,
      REDIS_URL: 'redis://127.0.0.1:6379',
      KEY_PREFIX: 'tb:',
      LOG_LEVEL: 'info',
      SCHEDULER_ENABLED: true,
      EXPIRE_CHUNK: 100,
    });
    expect(config.REDIS_CLUSTER_NODES).toBeUndefined();
    expect(config.ADMIN_TOKEN).toBeUndefined();
  });

  it('converts numbers and booleans from their string form and ignores unknown variables', () => {
    const config = validateConfig({
      PORT: '8080',
      SCHEDULER_ENABLED: 'false',
      HOME: '/root',
      REDIS_CLUSTER_NODES: 'a:7000,b:7001',
    });
    expect(config.PORT).toBe(8080);
    expect(config.SCHEDULER_ENABLED).toBe(false);
    expect(config.REDIS_CLUSTER_NODES).toBe('a:7000,b:7001');
    expect(config).not.toHaveProperty('HOME');
  });

  it.each([
    ['PORT', 'abc'],
    ['PORT', '70000'],
    ['REDIS_URL', 'localhost:6379'],
    ['REDIS_CLUSTER_NODES', 'a:7000;b'],
    ['KEY_PREFIX', 'has space'],
    ['KEY_PREFIX', '{tag}'],
    ['ADMIN_TOKEN', 'short'],
    ['LOG_LEVEL', 'loud'],
    ['EXPIRE_CHUNK', '0'],
    ['API_KEYS', 'short'],
    ['API_KEYS', 'a-long-enough-key-1,has space in it 0123'],
    ['TRUST_PROXY', '0'],
    ['TRUST_PROXY', 'proxy.example'],
    ['TRUST_PROXY', '10.0.0.0/8,nope'],
    ['IDEMPOTENCY_TTL_SEC', '10'],
    ['SCHEDULER_ENABLED', 'maybe'],
    ['COUNTER_PRECISIONS', '1,1'],
    ['COUNTER_PRECISIONS', '0,5'],
    ['REDIS_COMMAND_TIMEOUT_MS', '1.5'],
  ])('refuses %s=%j with a message naming the variable', (name, value) => {
    expect(() => validateConfig({ [name]: value })).toThrow(new RegExp(`Invalid configuration:[\\s\\S]*${name}`));
  });

  it('names every bad variable at once', () => {
    expect(() => validateConfig({ PORT: 'x', LOG_LEVEL: 'y' })).toThrow(/PORT[\s\S]*LOG_LEVEL|LOG_LEVEL[\s\S]*PORT/);
  });

  it('reads TRUST_PROXY as Fastify takes it: off, a hop count, or addresses and CIDRs', () => {
    expect(trustProxyOf(validateConfig({}))).toBe(false);
    expect(trustProxyOf(validateConfig({ TRUST_PROXY: '2' }))).toBe(2);
    expect(trustProxyOf(validateConfig({ TRUST_PROXY: '10.0.0.1, 192.168.0.0/16,::1' }))).toEqual([
      '10.0.0.1',
      '192.168.0.0/16',
      '::1',
    ]);
  });
});
