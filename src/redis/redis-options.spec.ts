import { BACKSTOP_TIMEOUT_FACTOR, DISCONNECT_TIMEOUT_MS, nodeOptions } from './redis-options';

describe('nodeOptions', () => {
  it('fails fast while Redis is away: no offline queue, no retries', () => {
    expect(nodeOptions({ commandTimeoutMs: 500, autoPipelining: false })).toMatchObject({
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      enableAutoPipelining: false,
    });
  });

  it("leaves the command timeout to the service (withDeadline): ioredis' own is a backstop", () => {
    expect(nodeOptions({ commandTimeoutMs: 500, autoPipelining: true })).toMatchObject({
      commandTimeout: 500 * BACKSTOP_TIMEOUT_FACTOR,
      enableAutoPipelining: true,
    });
  });

  it('lets go of a stream Redis already closed at once: no 2 s timer holding the process after close', () => {
    expect(nodeOptions({ commandTimeoutMs: 500, autoPipelining: true }).disconnectTimeout).toBe(DISCONNECT_TIMEOUT_MS);
    expect(DISCONNECT_TIMEOUT_MS).toBeLessThanOrEqual(100);
  });
});
