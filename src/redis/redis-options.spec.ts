import { nodeOptions } from './redis-options';

describe('nodeOptions', () => {
  it('fails fast while Redis is away: no offline queue, no retries', () => {
    expect(nodeOptions({ commandTimeoutMs: 500, autoPipelining: false })).toMatchObject({
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      commandTimeout: 500,
      enableAutoPipelining: false,
    });
  });

  it('halves the command timeout when auto-pipelined (a command may first wait for the pipeline ahead of it)', () => {
    expect(nodeOptions({ commandTimeoutMs: 500, autoPipelining: true })).toMatchObject({
      commandTimeout: 250,
      enableAutoPipelining: true,
    });
    expect(nodeOptions({ commandTimeoutMs: 51, autoPipelining: true }).commandTimeout).toBe(25);
  });
});
