import { GrowthQuota, UNLIMITED } from './growth-quota';
import { allowances } from '../../test/support/growth';

const HOUR_MS = 3_600_000;
const quotaOf = (items: number, maxClients = 100) =>
  new GrowthQuota({
    perInterval: allowances({ items, counters: 2, statsPairs: 2 }),
    intervalMs: HOUR_MS,
    maxClients,
  });

describe('GrowthQuota', () => {
  it('gives a client its quota at once, then refills it over the interval', () => {
    const quota = quotaOf(10);
    expect(quota.take('a', 'items', 7, 0)).toBe(7);
    expect(quota.take('a', 'items', 7, 0)).toBe(3);
    expect(quota.take('a', 'items', 1, 0)).toBe(0);
    expect(quota.take('b', 'items', 10, 0)).toBe(10); // clients apart
    expect(quota.take('a', 'items', 5, HOUR_MS / 2)).toBe(5);
    expect(quota.take('a', 'items', 20, 10 * HOUR_MS)).toBe(10); // never more than the quota
  });

  it('keeps kinds apart and answers UNLIMITED for a kind without a quota', () => {
    const quota = quotaOf(10);
    expect(quota.take('a', 'counters', 5, 0)).toBe(2);
    expect(quota.take('a', 'items', 5, 0)).toBe(5);
    expect(quota.take('a', 'likeUsers', 1_000_000, 0)).toBe(UNLIMITED);
  });

  it('takes nothing for nothing wanted, without tracking the client (a plain increment wants no actor entries)', () => {
    const quota = quotaOf(10);
    expect(quota.take('a', 'counters', 0, 0)).toBe(0);
    expect(quota.take('a', 'likeUsers', 0, 0)).toBe(UNLIMITED);
    expect(quota.trackedClients).toBe(0);
    expect(quota.take('a', 'counters', 5, 0)).toBe(2);
  });

  it("takes a share of an entry while the bucket holds it, its last token included (a short-kept answer's)", () => {
    const quota = new GrowthQuota({
      perInterval: allowances({ idempotentAnswers: 1 }),
      intervalMs: HOUR_MS,
      maxClients: 1,
    });
    for (let i = 0; i < 4; i++) expect(quota.take('a', 'idempotentAnswers', 0.25, 0)).toBe(0.25);
    expect(quota.take('a', 'idempotentAnswers', 0.25, 0)).toBe(0);
    expect(quota.take('a', 'idempotentAnswers', 0.25, HOUR_MS / 4)).toBe(0.25);
  });

  it('takes back what a write did not create', () => {
    const quota = quotaOf(10);
    expect(quota.take('a', 'items', 10, 0)).toBe(10);
    quota.giveBack('a', 'items', 4, 0);
    expect(quota.take('a', 'items', 10, 0)).toBe(4);
    quota.giveBack('a', 'items', 100, 0);
    expect(quota.take('a', 'items', 100, 0)).toBe(10);
  });

  it('answers Retry-After in seconds until the wanted entries are back, a whole interval when never', () => {
    const quota = quotaOf(3600); // one per second
    quota.take('a', 'items', 3600, 0);
    expect(quota.retryAfterSec('a', 'items', 1, 0)).toBe(1);
    expect(quota.retryAfterSec('a', 'items', 90, 0)).toBe(90);
    expect(quota.retryAfterSec('a', 'items', 3601, 0)).toBe(3600);
  });

  it('beyond maxClients never hands out a fresh budget: newcomers share the overflow until a client is refilled', () => {
    const quota = quotaOf(1, 2);
    expect(quota.take('a', 'items', 1, 0)).toBe(1);
    expect(quota.take('b', 'items', 1, 0)).toBe(1);
    expect(quota.take('c', 'items', 1, 0)).toBe(1); // the overflow budget
    expect(quota.take('d', 'items', 1, 0)).toBe(0); // the same, spent
    expect(quota.trackedClients).toBe(2);
    expect(quota.take('a', 'items', 1, 0)).toBe(0); // 'a' was not forgotten
    expect(quota.take('e', 'items', 1, HOUR_MS)).toBe(1); // 'b' is refilled: forgetting it gives nothing away
    expect(quota.trackedClients).toBe(2);
  });
});
