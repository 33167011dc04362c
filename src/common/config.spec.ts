import { validateConfig } from './config';
import { itGivesDefaults, itRefusesEach } from '../../test/support/settings';

describe('validateConfig', () => {
  itGivesDefaults(
    validateConfig,
    {
      PORT: 3000,
      REDIS_URL: 'redis://127.0.0.1:6379',
      KEY_PREFIX: 'tb:',
      LOG_LEVEL: 'info',
      SCHEDULER_ENABLED: true,
      EXPIRE_CHUNK: 100,
      QUOTA_INTERVAL_SEC: 3600,
      QUOTA_NEW_ITEMS: 10_000,
      QUOTA_NEW_LIKE_USERS: 10_000,
      QUOTA_NEW_COUNTERS: 100,
      QUOTA_NEW_STATS_PAIRS: 100,
      MAX_COUNTERS: 100_000,
      MAX_STATS_PAIRS: 100_000,
      STATS_INDEX_PRUNE_INTERVAL_MS: 60_000,
      STATS_INDEX_PRUNE_BATCH: 500,
    },
    ['REDIS_CLUSTER_NODES'],
  );

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

  itRefusesEach(validateConfig, [
    ['PORT', 'abc'],
    ['PORT', '70000'],
    ['REDIS_URL', 'localhost:6379'],
    ['REDIS_CLUSTER_NODES', 'a:7000;b'],
    ['KEY_PREFIX', 'has space'],
    ['KEY_PREFIX', '{tag}'],
    ['LOG_LEVEL', 'loud'],
    ['EXPIRE_CHUNK', '0'],
    ['IDEMPOTENCY_TTL_SEC', '10'],
    ['SCHEDULER_ENABLED', 'maybe'],
    ['COUNTER_PRECISIONS', '1,1'],
    ['COUNTER_PRECISIONS', '0,5'],
    ['REDIS_COMMAND_TIMEOUT_MS', '1.5'],
    ['REDIS_RECONNECT_MAX_MS', '5'],
    ['METRICS_TOKEN', 'short'],
    ['METRICS_TOKEN', 'has a space in it 0123456789'],
  ]);

  it('leaves the metrics token unset by default', () => {
    expect(validateConfig({}).METRICS_TOKEN).toBeUndefined();
  });

  it('names every bad variable at once', () => {
    expect(() => validateConfig({ PORT: 'x', LOG_LEVEL: 'y' })).toThrow(/PORT[\s\S]*LOG_LEVEL|LOG_LEVEL[\s\S]*PORT/);
  });

  it('refuses quotas and caps outside their bounds, naming the variable', () => {
    expect(validateConfig({ QUOTA_NEW_ITEMS: '0', MAX_COUNTERS: '0' })).toMatchObject({
      QUOTA_NEW_ITEMS: 0,
      MAX_COUNTERS: 0,
    });
    expect(() => validateConfig({ QUOTA_NEW_ITEMS: '-1' })).toThrow(/QUOTA_NEW_ITEMS/);
    expect(() => validateConfig({ QUOTA_INTERVAL_SEC: '59' })).toThrow(/QUOTA_INTERVAL_SEC/);
    expect(() => validateConfig({ MAX_STATS_PAIRS: '1.5' })).toThrow(/MAX_STATS_PAIRS/);
    expect(() => validateConfig({ STATS_INDEX_PRUNE_BATCH: '0' })).toThrow(/STATS_INDEX_PRUNE_BATCH/);
  });
});
