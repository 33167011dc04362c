import { Injectable } from '@nestjs/common';

/** What a scheduled job reports about itself (read by /metrics). */
export interface JobStats {
  runs: number;
  failures: number;
  lastDurationMs: number;
  /**
   * performance.now() at the end of the last pass that had no failure; undefined until one. Monotonic,
   * so the job needs no Clock: /metrics turns it into a wall-clock time.
   */
  lastSuccessPerfMs?: number;
  /** Work the last pass left for the next, for jobs that can tell (the expiry job: boards still draining). */
  backlog?: number;
}

/** Scheduled jobs register their live stats here, so operations code can read them without importing the features. */
@Injectable()
export class JobRegistry {
  private readonly jobs = new Map<string, JobStats>();

  register(name: string, stats: JobStats): void {
    this.jobs.set(name, stats);
  }

  entries(): Array<[string, JobStats]> {
    return [...this.jobs.entries()];
  }
}
