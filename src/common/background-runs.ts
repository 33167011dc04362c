/**
 * Background runs keyed by what each works on: at most one run per key on this instance, none started
 * once stopping, and a stop that resolves when every run has stopped (done, or paused at its next
 * step: a run reads `stopping` between its steps). A run handles its own failure: what it rejects
 * with is not caught here.
 */
export class BackgroundRuns {
  private readonly runs = new Map<string, Promise<void>>();
  private stopped = false;

  /** `onCount`: told how many runs are under way after each start and end. */
  constructor(private readonly onCount: (running: number) => void = () => {}) {}

  /** True once `stop` was called: runs should pause at their next step. */
  get stopping(): boolean {
    return this.stopped;
  }

  has(key: string): boolean {
    return this.runs.has(key);
  }

  /** Starts `run` under `key`, unless one runs under it already or the runs are stopping. */
  start(key: string, run: () => Promise<void>): void {
    if (this.stopped || this.runs.has(key)) return;
    const running = run().finally(() => {
      this.runs.delete(key);
      this.onCount(this.runs.size);
    });
    this.runs.set(key, running);
    this.onCount(this.runs.size);
  }

  /** Resolves once the run under `key` (if any) has stopped. */
  async settled(key?: string): Promise<void> {
    if (key !== undefined) await this.runs.get(key);
    else await Promise.allSettled([...this.runs.values()]);
  }

  /** Starts no more runs; resolves once every run under way has stopped. */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.settled();
  }
}
