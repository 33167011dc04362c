import type { ErrorCode } from '../../src/common/errors';
import type { Sizes, Scale } from './boards';
import type { MarkedCalls } from './redis-meter';

export interface HttpRequest {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  path: string;
  body?: unknown;
  headers?: Record<string, string>;
}

export interface HttpAnswer {
  status: number;
  /** The JSON body (undefined for another type or none). */
  body: Record<string, unknown> | undefined;
}

/**
 * Who sends a request: the measured client (low quotas), the seeder (quotas and WRITE_COST_PER_CALL out
 * of reach), the admin, or the operator: the admin on the seeder's instance, whose bound lets it store
 * boards a default instance refuses (as one declared before BOARD_WRITE_TOO_COSTLY was). `stopping`: the
 * measured client on an instance that stops after an unlike's first take-back call (the take-back it
 * leaves recorded is the scheduler's sweep's: sweepTakeBacks). `staging stops`: the measured client on an
 * instance that stops once a filtered span read's span is staged (./stopped-reads.ts).
 */
export type Caller = 'client' | 'seeder' | 'admin' | 'operator' | 'stopping' | 'staging stops';

/** A background job of the measured instance: the ranking scheduler's pass, the counters' cleaner, the stats pruner. */
export type HarnessJob = 'ranking' | 'counters' | 'stats';

/** A run an admin route starts in the background, in steps: a retraction, a re-weighting, an alias merge. */
export type HarnessRun = 'retraction' | 'weighing' | 'merge';

export interface HarnessContext {
  scale: Scale;
  sizes: Sizes;
  send(request: HttpRequest, caller?: Caller): Promise<HttpAnswer>;
  /** Opens an event stream, waits for its first event, and closes it: the answer's status. */
  openStream(path: string): Promise<number>;
  nowSec(): number;
  /** Moves the service's clock forward. */
  advanceSec(seconds: number): Promise<void>;
  /**
   * Redis' own clock passing every expiry set on the keys matching `patterns` (after the key prefix):
   * those keys go, as Redis expires them. The service's clock is a fake one, Redis' is not.
   */
  expireOnRedis(patterns: readonly string[]): Promise<void>;
  /** The measured instance's sweep of a board's take-backs left recorded, as its scheduler's visit runs it. */
  sweepTakeBacks(board: string): Promise<boolean>;
  /**
   * Makes board `to` (declared, never written) hold what board `from` holds, key for key, without a
   * write; undefined where Redis cannot (a Cluster: COPY does not cross slots).
   */
  copyBoard?: (from: string, to: string) => Promise<void>;
  /** Resolves once the measured instance's background drops of deleted boards have stopped. */
  dropsSettled(): Promise<void>;
  /**
   * One pass of a background job of the measured instance, as its interval runs it (the jobs' timers are
   * off in the harness): false when the pass failed or counted failures.
   */
  runJob(job: HarnessJob): Promise<boolean>;
  /**
   * Writes both instances' pending access times (their flush timers are taken out in the harness: a
   * flush landing inside a row would add its calls to the row's): between rows, not measured.
   */
  statsFlushed(): Promise<void>;
  /**
   * Resolves once the instance `caller` sends to runs no step of the board's run `key` (a retraction's
   * id, an actor, an alias): done or paused, as its next GET says (a GET resumes a paused one).
   */
  runSettled(run: HarnessRun, board: string, key: string, caller: Caller): Promise<void>;
  /**
   * The Redis names of the functions the measured instance has called: beside the SLOWLOG's, which a
   * scheduler pass of over a million commands can outrun between two polls.
   */
  functionsCalled: Set<string>;
  /** What one row leaves for the next (a retraction's id, an API key's id). */
  state: Map<string, string>;
}

/**
 * Keys a row makes Redis hold that no growth row's quota stops (bookkeeping a read or an admin step
 * leaves behind): measured once the row is done, by MEMORY USAGE of every key matching `match`, and
 * held to their bound; none held is a fault too (the row did not make what it measures).
 */
export interface HeldKeys {
  /** Their name in the table (e.g. `segheld`). */
  name: string;
  /** A SCAN MATCH pattern. */
  match: string;
  /** The most entries (members, fields) they may hold after the row, and what bounds them. */
  mostEntries(context: HarnessContext): number;
  why: string;
  /** The most bytes they may hold per entry of mostEntries (the key's own overhead included). */
  bytesPerEntry: number;
}

/** What keys of a HeldKeys held after the row. */
export interface HeldFigure {
  name: string;
  keys: number;
  entries: number;
  bytes: number;
  mostEntries: number;
  mostBytes: number;
}

/**
 * One route's costliest documented use. `route` is the OpenAPI document's `METHOD /path/{param}`.
 * `grows`: the request makes Redis hold more (fresh ids each time); the harness sends it up to
 * `times` times with a quota set low and expects a 429 QUOTA_EXCEEDED before the end, or the
 * `refusal` of the bound that stops it instead (a count held in Redis, as a board's weighed actors).
 */
export interface WorstRow {
  /** The route, or `JOB <name>` for a row of a background job (no route: its pass is the row's request). */
  route: string;
  worst: string;
  request?(context: HarnessContext, attempt: number): HttpRequest;
  /** A background job's pass, run instead of a request: answers 200, or 500 when the pass failed. */
  job?: HarnessJob;
  /** Answers the row accepts (default: any 2xx). */
  expect?: readonly number[];
  /** Times measured (default 2); the figures are the costliest. */
  times?: number;
  grows?: { times: number; refusal?: ErrorCode };
  /** An event stream: opened, read to its first event, closed. */
  stream?: boolean;
  /**
   * Known to pass its Redis-time bound, and why: the row is still run and reported (a status it does
   * not accept still fails), its time is not held against it. The reason names the open issue row.
   */
  open?: string;
  /**
   * Why the request is many bounded calls by design (each still held to the per-call bound): its
   * Redis time in all is then not held to the per-request bound.
   */
  manyCalls?: string;
  /**
   * The most commands one call of the row's scripts may run, and why: a read whose calls a work count
   * bounds is judged by it too, a figure the machine's load does not move (its ms figure does).
   */
  callCommands?: { most: number; why: string };
  /**
   * Why each call of the row is held to WRITE_CALL_COMMANDS, as a write call is: work a read does in
   * bounded chunks of its own (a closed period's archive drained and written).
   */
  drains?: string;
  /**
   * Who sends the row's requests (default: the admin for /admin routes, else the measured client). A row
   * measuring the work of an item new to a window may send as the seeder: the measured client's items
   * quota is spent by the rows before it in a full run, and the new-item rows show that refusal.
   */
  caller?: Caller;
  /** Runs after the row is measured, with its last answer: e.g. finishing background work it started. */
  settle?(context: HarnessContext, answer: HttpAnswer | undefined): Promise<void>;
  /**
   * The settle's calls are the row's too (an admin job's steps, run to its end): each is held to the
   * per-call bounds, as the request's calls are.
   */
  measuresSettle?: true;
  /** Runs before the row (once): e.g. making what the row deletes. */
  prepare?(context: HarnessContext): Promise<void>;
  /** Keys the row makes Redis hold, measured after it (and its settle) and held to their bounds. */
  holds?: readonly HeldKeys[];
  /**
   * The row's calls of a path it exists to reach, told by a key their scripts touch (a command's first
   * argument matching `key`): counted apart in the table (how many, the longest, the most commands of
   * one), and none is a fault (the row no longer reaches the path).
   */
  marks?: { name: string; key: RegExp };
  /** Runs once the held keys are measured: e.g. lapsing what a stopped instance left, as Redis would. */
  release?(context: HarnessContext): Promise<void>;
  /**
   * Why the row's Redis calls on a Cluster are not a single node's (another function, calls sized by
   * node): `npm test` runs it on a Cluster too (./cluster-rows.ts).
   */
  cluster?: string;
}

export interface RowFigures {
  route: string;
  worst: string;
  open?: string;
  statuses: number[];
  /** Redis calls of the costliest request. */
  calls: number;
  maxCallMs: number;
  /**
   * The longest call the time bound judges: the requests' own. A settle's steps (measuresSettle) and a
   * job's pass are in maxCallMs but judged by their commands: they cannot be measured again, and a run
   * of hundreds of calls meets the machine's stalls.
   */
  judgedCallMs: number;
  /**
   * The least CPU time the judged call can have held: its wall time less every wait of Redis's thread
   * for a CPU over its request (RedisCost.leastHeldMs); 0 where judgedCallMs is.
   */
  judgedHeldMs: number;
  /** Redis's thread's wait for a CPU over the request of the longest call, ms (RedisCost.waitMs). */
  redisWaitMs: number;
  maxCallName: string;
  requestMs: number;
  /**
   * The most CPU time Redis's main thread spent over one of the row's requests (not its prepare or
   * settle), every master, ms (RedisCost.cpuMs): the time bound's check against a stalled host.
   */
  redisCpuMs: number;
  /** Measurements taken when the first was past its time bound (runWorstCase); absent: one. */
  runs?: number;
  /** Commands the costliest request's scripts ran, by name (RedisCost.scriptCommands). */
  scriptCommands: Record<string, number>;
  /** The most commands one call of the costliest request's scripts ran (RedisCost.maxCallCommands). */
  maxCallCommands: number;
  /** used_memory grown per request answered 2xx (growth rows), bytes. */
  bytesPerRequest: number | null;
  /** Growth rows: the request at which the quota refused (null: never). */
  refusedAt: number | null;
  /** The row's held keys (WorstRow.holds), measured after it. */
  held?: HeldFigure[];
  /** The calls WorstRow.marks tells apart (RedisCost.marked), and their name. */
  marked?: MarkedCalls & { name: string };
}
