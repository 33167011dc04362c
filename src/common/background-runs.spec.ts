import { BackgroundRuns } from './background-runs';

/** A run that ends when the test says so. */
function gate(): { open: () => void; run: () => Promise<void> } {
  let open = () => {};
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open: () => open(), run: () => opened };
}

describe('BackgroundRuns', () => {
  it('runs one run per key, counts them, and forgets a run once it ends', async () => {
    const counts: number[] = [];
    const runs = new BackgroundRuns((running) => counts.push(running));
    const first = gate();
    let second = 0;
    runs.start('a', first.run);
    runs.start('a', () => Promise.resolve(void second++));
    expect(runs.has('a')).toBe(true);
    expect(second).toBe(0);
    first.open();
    await runs.settled('a');
    await runs.settled();
    expect(runs.has('a')).toBe(false);
    expect(counts).toEqual([1, 0]);
  });

  it('starts nothing once stopping, and its stop waits for the runs under way', async () => {
    const runs = new BackgroundRuns();
    const under = gate();
    let ended = false;
    runs.start('a', () => under.run().then(() => void (ended = true)));
    const stopped = runs.stop();
    expect(runs.stopping).toBe(true);
    runs.start('b', () => Promise.resolve());
    expect(runs.has('b')).toBe(false);
    under.open();
    await stopped;
    expect(ended).toBe(true);
  });
});
