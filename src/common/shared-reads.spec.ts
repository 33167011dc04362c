import { SharedReads } from './shared-reads';

/** Lets setImmediate callbacks and the promise jobs they start run. */
const turn = () => new Promise((resolve) => setImmediate(resolve));

/** A read whose runs the test answers by hand. */
function manualRead() {
  const runs: Array<{ answer: (value: string) => void; fail: (error: Error) => void }> = [];
  const read = () => new Promise<string>((resolve, reject) => runs.push({ answer: resolve, fail: reject }));
  return { runs, read };
}

describe('SharedReads', () => {
  it('starts a lone read at the end of the turn, not before', async () => {
    const shared = new SharedReads<string>();
    const { runs, read } = manualRead();
    const answer = shared.share('a', read);
    expect(runs).toHaveLength(0);
    await turn();
    expect(runs).toHaveLength(1);
    runs[0].answer('A');
    await expect(answer).resolves.toBe('A');
    expect(shared.gatheringCount).toBe(0);
  });

  it('runs the reads of one key asked in one turn once, and each key apart', async () => {
    const shared = new SharedReads<string>();
    const { runs, read } = manualRead();
    const answers = [
      shared.share('a', read),
      shared.share('a', read),
      shared.share('b', read),
      shared.share('a', read),
    ];
    expect(shared.gatheringCount).toBe(2);
    await turn();
    expect(runs).toHaveLength(2);
    runs[0].answer('A');
    runs[1].answer('B');
    await expect(Promise.all(answers)).resolves.toEqual(['A', 'A', 'B', 'A']);
  });

  it('never joins a run already started: a read asked after it gets a run of its own', async () => {
    const shared = new SharedReads<string>();
    const { runs, read } = manualRead();
    const first = shared.share('a', read);
    await turn();
    const later = shared.share('a', read);
    expect(runs).toHaveLength(1);
    runs[0].answer('before');
    await expect(first).resolves.toBe('before');
    await turn();
    expect(runs).toHaveLength(2);
    runs[1].answer('after');
    await expect(later).resolves.toBe('after');
  });

  it('fails every read that shared a failed run, and the next turn runs again', async () => {
    const shared = new SharedReads<string>();
    const { runs, read } = manualRead();
    const answers = [shared.share('a', read), shared.share('a', read)];
    await turn();
    runs[0].fail(new Error('down'));
    const settled = await Promise.allSettled(answers);
    expect(settled.map((s) => s.status)).toEqual(['rejected', 'rejected']);
    const again = shared.share('a', read);
    await turn();
    runs[1].answer('up');
    await expect(again).resolves.toBe('up');
  });
});
