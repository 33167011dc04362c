import { applyInCalls, NotApplied } from './write-records';

/** A request and its answer: the loop reads neither, only which answers are NotApplied. */
const request = (item: string) => ({ item });
const answer = (item: string) => ({ item });

describe('applyInCalls: the requests a call leaves (NotApplied) go in the next calls', () => {
  const requests = ['a', 'b', 'c', 'd', 'e'].map(request);

  it('sends what each call left, and answers every request in its place', async () => {
    const sent: string[][] = [];
    const answers = await applyInCalls(requests, (part) => {
      sent.push(part.map((r) => r.item));
      return Promise.resolve(part.map((r, k) => (k < 2 ? answer(r.item) : new NotApplied())));
    });
    expect(sent).toEqual([['a', 'b', 'c', 'd', 'e'], ['c', 'd', 'e'], ['e']]);
    expect(answers).toEqual(['a', 'b', 'c', 'd', 'e'].map(answer));
  });

  it('fails only the requests a later call carried; the first call failing throws', async () => {
    const failure = new Error('TB_STALE_CONFIG');
    let calls = 0;
    const answers = await applyInCalls(requests, (part) => {
      if (calls++ > 0) return Promise.reject(failure);
      return Promise.resolve(part.map((r, k) => (k < 3 ? answer(r.item) : new NotApplied())));
    });
    expect(answers).toEqual([answer('a'), answer('b'), answer('c'), failure, failure]);
    await expect(applyInCalls(requests, () => Promise.reject(failure))).rejects.toBe(failure);
  });

  it('refuses a call that applied none of its requests (no progress)', async () => {
    await expect(applyInCalls(requests, (part) => Promise.resolve(part.map(() => new NotApplied())))).rejects.toThrow(
      'applied none',
    );
  });
});
