import { Coalescer } from './coalescer';

/** A flush whose calls the test answers by hand, and what each call carried. */
function manualFlush() {
  const calls: Array<{
    key: string;
    requests: number[];
    answer: (results: Array<number | Error>) => void;
    fail: (error: Error) => void;
  }> = [];
  const flush = (key: string, requests: number[]) =>
    new Promise<Array<number | Error>>((resolve, reject) =>
      calls.push({ key, requests, answer: resolve, fail: reject }),
    );
  return { calls, flush };
}

/** Lets setImmediate callbacks and the promise jobs they start run. */
const turn = () => new Promise((resolve) => setImmediate(resolve));

describe('Coalescer', () => {
  it('sends a lone request at the end of the turn, alone', async () => {
    const { calls, flush } = manualFlush();
    const coalescer = new Coalescer<number, number>({ delayMs: 1, maxBatch: 10 }, flush);
    const answer = coalescer.submit('a', 7);
    expect(calls).toHaveLength(0);
    await turn();
    expect(calls.map((c) => c.requests)).toEqual([[7]]);
    calls[0].answer([70]);
    await expect(answer).resolves.toBe(70);
  });

  it('sends the requests of one turn and one key as one call, in order, each answered with its own result', async () => {
    const { calls, flush } = manualFlush();
    const coalescer = new Coalescer<number, number>({ delayMs: 1, maxBatch: 10 }, flush);
    const answers = [1, 2, 3].map((n) => coalescer.submit('a', n));
    const other = coalescer.submit('b', 9);
    await turn();
    expect(calls.map((c) => [c.key, c.requests])).toEqual([
      ['a', [1, 2, 3]],
      ['b', [9]],
    ]);
    calls[0].answer([10, new Error('refused'), 30]);
    calls[1].answer([90]);
    const settled = await Promise.allSettled([...answers, other]);
    expect(settled.map((s) => (s.status === 'fulfilled' ? s.value : (s.reason as Error).message))).toEqual([
      10,
      'refused',
      30,
      90,
    ]);
  });

  it('gathers requests while a call for the key is under way and sends them when it answers', async () => {
    const { calls, flush } = manualFlush();
    const coalescer = new Coalescer<number, number>({ delayMs: 1000, maxBatch: 10 }, flush);
    const first = coalescer.submit('a', 1);
    await turn();
    const later = [2, 3, 4].map((n) => coalescer.submit('a', n));
    await turn();
    expect(calls).toHaveLength(1);
    expect(coalescer.waitingCount).toBe(3);
    calls[0].answer([1]);
    await first;
    expect(calls.map((c) => c.requests)).toEqual([[1], [2, 3, 4]]);
    calls[1].answer([2, 3, 4]);
    await expect(Promise.all(later)).resolves.toEqual([2, 3, 4]);
    expect(coalescer.waitingCount).toBe(0);
  });

  it('sends the gathered requests after delayMs when the call under way does not answer', async () => {
    jest.useFakeTimers({ doNotFake: ['setImmediate'] });
    try {
      const { calls, flush } = manualFlush();
      const coalescer = new Coalescer<number, number>({ delayMs: 5, maxBatch: 10 }, flush);
      void coalescer.submit('a', 1);
      await turn();
      void coalescer.submit('a', 2);
      jest.advanceTimersByTime(4);
      expect(calls).toHaveLength(1);
      jest.advanceTimersByTime(1);
      expect(calls.map((c) => c.requests)).toEqual([[1], [2]]);
    } finally {
      jest.useRealTimers();
    }
  });

  it('sends a full batch at once and starts the next', async () => {
    const { calls, flush } = manualFlush();
    const coalescer = new Coalescer<number, number>({ delayMs: 1, maxBatch: 2 }, flush);
    for (const n of [1, 2, 3]) void coalescer.submit('a', n);
    expect(calls.map((c) => c.requests)).toEqual([[1, 2]]);
    calls[0].answer([1, 2]);
    await turn();
    expect(calls.map((c) => c.requests)).toEqual([[1, 2], [3]]);
  });

  it('keeps a call within maxWeight: a request that would pass it sends the gathering call and starts the next', async () => {
    const { calls, flush } = manualFlush();
    const coalescer = new Coalescer<number, number>({ delayMs: 1, maxBatch: 100, maxWeight: 10 }, flush);
    // Weights 4, 4, 4, 10, 1: [4, 4] (a third 4 would make 12), [4], [10] (full), then [1] at the turn's end.
    for (const [n, weight] of [
      [1, 4],
      [2, 4],
      [3, 4],
      [4, 10],
      [5, 1],
    ])
      void coalescer.submit('a', n, weight);
    expect(calls.map((c) => c.requests)).toEqual([[1, 2], [3], [4]]);
    await turn();
    for (const call of calls) call.answer(call.requests);
    await turn();
    expect(calls.map((c) => c.requests)).toEqual([[1, 2], [3], [4], [5]]);
  });

  it('rejects every request of a call that fails as a whole, and goes on with the next', async () => {
    const { calls, flush } = manualFlush();
    const coalescer = new Coalescer<number, number>({ delayMs: 1, maxBatch: 10 }, flush);
    const answers = [1, 2].map((n) => coalescer.submit('a', n));
    await turn();
    const next = coalescer.submit('a', 3);
    calls[0].fail(new Error('Command timed out'));
    await expect(Promise.all(answers)).rejects.toThrow('Command timed out');
    await turn();
    calls[1].answer([3]);
    await expect(next).resolves.toBe(3);
  });
});
