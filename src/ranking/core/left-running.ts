import { Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { BackgroundRuns } from '../../common/background-runs';
import { redisFailureInWords } from '../../common/redis-errors';

/** Most runs of one kind an instance resumes as it starts (the rest: at their next GET). */
export const RESUMED_AT_START = 100;

/** A store's notes of the bounded runs under way on a board (a zset of "<board>\u001f<key>" in Redis). */
export interface RunningNotes {
  /** The runs noted as running (at most `most`, oldest first): [board, key]. */
  runningOnes(most: number): Promise<Array<[string, string]>>;
  finished(board: string, key: string): Promise<void>;
  /** Runs `listener` once the connection to Redis is ready again. */
  onceConnected(listener: () => void): void;
}

/** What a kind of run is, for the resumption of those a stopped instance left running. */
export interface RunKind {
  /** The runs in words, for the log: "alias merges". */
  plural: string;
  /** One run in words, for the log: `alias merge on board "posts"`. */
  one: (board: string, key: string) => string;
  /** The run's state as its GET answers it (which resumes it when no runner of this instance holds it). */
  view: (board: string, key: string) => Promise<{ state: string }>;
  /** Whether a GET's refusal says the run is gone for good (its board, or what it worked on): forgotten. */
  gone: (error: unknown) => boolean;
}

/** The key of a board's run in BackgroundRuns. */
export function runnerKey(board: string, key: string): string {
  return `${board}\u001f${key}`;
}

/**
 * The bookkeeping every resumable kind of run shares (actor re-weightings, alias merges): each run is
 * launched at most once per instance and logs its pause; at start the runs a stopped instance left
 * running are resumed, and when Redis is away then, once it is back (the boot is not stopped: every
 * request answers 503 until then).
 */
export class LeftRunning {
  constructor(
    private readonly runs: BackgroundRuns,
    private readonly notes: RunningNotes,
    private readonly logger: Logger,
    private readonly kind: RunKind,
  ) {}

  /** Runs `run` for the board's `key` unless this instance runs it already; a failure pauses it. */
  launch(board: string, key: string, run: () => Promise<void>): void {
    this.runs.start(runnerKey(board, key), () =>
      run().catch((error: unknown) =>
        this.logger.warn(`${this.kind.one(board, key)} paused (a GET resumes it): ${String(error)}`),
      ),
    );
  }

  /** Resumes the runs left running (at the application's start). */
  async resumeAtStart(): Promise<void> {
    await this.resume().catch((error: unknown) => this.resumeWhenBack(error));
  }

  private resumeWhenBack(error: unknown): void {
    this.logger.warn(
      `${this.kind.plural} left running not resumed at start (${redisFailureInWords(error)}): retried once Redis is back; each also resumes at its next GET`,
    );
    this.notes.onceConnected(() => {
      if (!this.runs.stopping) void this.resume().catch((again: unknown) => this.resumeWhenBack(again));
    });
  }

  private async resume(): Promise<void> {
    for (const [board, key] of await this.notes.runningOnes(RESUMED_AT_START)) {
      const view = await this.kind.view(board, key).catch(async (error: unknown) => {
        if (this.kind.gone(error)) await this.notes.finished(board, key);
        else this.logger.warn(`${this.kind.one(board, key)} not resumed: ${String(error)}`);
      });
      // Done, but its runner stopped before it said so.
      if (view?.state === 'done') await this.notes.finished(board, key);
    }
  }
}

/**
 * The base of a service of resumable runs (actor re-weightings, alias merges, retractions): its runs
 * launched through LeftRunning, the ones a stopped instance left running resumed at start (each by
 * its GET, `get`), stopped at shutdown, and each one awaitable until this instance's runner stops.
 */
export abstract class ResumableRuns implements OnApplicationBootstrap, OnApplicationShutdown {
  protected readonly logger: Logger;
  protected readonly runs: BackgroundRuns;
  protected readonly left: LeftRunning;

  /** `onCount`: told how many runs this instance runs, at each start and end of one. */
  constructor(notes: RunningNotes, context: string, kind: Omit<RunKind, 'view'>, onCount?: (running: number) => void) {
    this.logger = new Logger(context);
    this.runs = new BackgroundRuns(onCount);
    this.left = new LeftRunning(this.runs, notes, this.logger, { ...kind, view: (board, key) => this.get(board, key) });
  }

  /** The run's state as its GET answers it (which resumes it when no runner of this instance holds it). */
  abstract get(board: string, key: string): Promise<{ state: string }>;

  /** Resolves once this instance's runner of the board's `key` (if any) has stopped: finished or paused. */
  async settled(board: string, key: string): Promise<void> {
    await this.runs.settled(runnerKey(board, key));
  }

  /**
   * Resumes the runs a stopped instance left running. A Redis that is away does not stop the boot
   * (every request then answers 503 until it is back): they are resumed once it is back.
   */
  onApplicationBootstrap(): Promise<void> {
    return this.left.resumeAtStart();
  }

  onApplicationShutdown(): Promise<void> {
    return this.runs.stop();
  }
}
