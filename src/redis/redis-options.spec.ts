import { BACKSTOP_TIMEOUT_FACTOR, DISCONNECT_TIMEOUT_MS, nodeOptions, reconnectDelay } from './redis-options';

describe('nodeOptions', () => {
  it('fails fast while Redis is away: no offline queue, no retries', () => {
    expect(nodeOptions({ commandTimeoutMs: 500, autoPipelining: false, reconnectMaxMs: 1000 })).toMatchObject({
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      enableAutoPipelining: false,
    });
  });

  it("leaves the command timeout to the service (withDeadline): ioredis' own is a backstop", () => {
    expect(nodeOptions({ commandTimeoutMs: 500, autoPipelining: true, reconnectMaxMs: 1000 })).toMatchObject({
      commandTimeout: 500 * BACKSTOP_TIMEOUT_FACTOR,
      enableAutoPipelining: true,
    });
  });

  it('lets go of a stream Redis already closed at once: no 2 s timer holding the process after close', () => {
    expect(nodeOptions({ commandTimeoutMs: 500, autoPipelining: true, reconnectMaxMs: 1000 }).disconnectTimeout).toBe(
      DISCONNECT_TIMEOUT_MS,
    );
    expect(DISCONNECT_TIMEOUT_MS).toBeLessThanOrEqual(100);
  });
});

describe('reconnectDelay', () => {
  it('waits a tenth of REDIS_RECONNECT_MAX_MS more each attempt, up to it', () => {
    expect([1, 2, 10, 11, 50].map(reconnectDelay(1000))).toEqual([100, 200, 1000, 1000, 1000]);
    expect([1, 3, 10, 12].map(reconnectDelay(50))).toEqual([5, 15, 50, 50]);
  });

  it('is the retry strategy of a node connection, at the setting given', () => {
    const options = nodeOptions({ commandTimeoutMs: 500, autoPipelining: true, reconnectMaxMs: 20 });
    expect([1, 5].map((attempt) => options.retryStrategy!(attempt))).toEqual([2, 10]);
  });
});
