import { RateLimiter } from './rate-limiter';

describe('RateLimiter', () => {
  it('allows the burst within one second, then refuses with Retry-After 1', () => {
    const limiter = new RateLimiter({ perSecond: 10, burst: 3, maxClients: 100 });
    expect([0, 10, 20].map((t) => limiter.check('a', 1_000 + t).allowed)).toEqual([true, true, true]);
    expect(limiter.check('a', 1_050)).toEqual({ allowed: false, retryAfterSec: 1 });
    expect(limiter.check('b', 1_050).allowed).toBe(true);
    expect(limiter.check('a', 2_100).allowed).toBe(true);
  });

  it('holds the sustained rate over ten seconds', () => {
    const limiter = new RateLimiter({ perSecond: 2, burst: 100, maxClients: 100 });
    let allowed = 0;
    for (let i = 0; i < 40; i++) if (limiter.check('a', 100_000 + i * 10).allowed) allowed++;
    expect(allowed).toBe(20);
    const refused = limiter.check('a', 100_500);
    expect(refused.allowed).toBe(false);
    expect(refused.allowed === false && refused.retryAfterSec).toBeGreaterThanOrEqual(1);
    expect(limiter.check('a', 111_000).allowed).toBe(true);
  });

  it('beyond maxClients forgets only an idle client; newcomers share one overflow budget meanwhile', () => {
    const limiter = new RateLimiter({ perSecond: 1, burst: 1, maxClients: 2 });
    expect(limiter.check('a', 0).allowed).toBe(true);
    expect(limiter.check('b', 0).allowed).toBe(true);
    expect(limiter.check('c', 0).allowed).toBe(true); // the overflow budget
    expect(limiter.check('d', 0).allowed).toBe(false); // the same overflow budget, spent
    expect(limiter.trackedClients).toBe(2);
    expect(limiter.check('a', 10).allowed).toBe(false); // 'a' was not forgotten: no fresh budget
    expect(limiter.check('e', 20_000).allowed).toBe(true); // 'b' was idle 10 s: forgotten
    expect(limiter.trackedClients).toBe(2);
  });

  it('takes a cost above the burst only on an empty budget, then counts all of it', () => {
    const limiter = new RateLimiter({ perSecond: 10, burst: 20, maxClients: 10 });
    expect(limiter.check('a', 0, 5).allowed).toBe(true);
    expect(limiter.check('a', 10, 1_000).allowed).toBe(false);
    expect(limiter.check('a', 20_000, 1_000).allowed).toBe(true);
    expect(limiter.check('a', 25_000, 1).allowed).toBe(false);
    expect(limiter.check('a', 31_000, 1).allowed).toBe(true);
  });

  it('peek counts nothing; count counts without asking', () => {
    const limiter = new RateLimiter({ perSecond: 1, burst: 2, maxClients: 10 });
    expect(limiter.peek('a', 0).allowed).toBe(true);
    limiter.count('a', 0);
    limiter.count('a', 0);
    expect(limiter.peek('a', 0)).toEqual({ allowed: false, retryAfterSec: 1 });
  });
});
