import { Logger } from '@nestjs/common';
import type { BoardCache } from '../ranking/boards/board-cache';
import { IngestEvent, parseEvent } from './ingest-event';
import { INGEST_RETRY_MS } from './ingest.limits';
import { IngestFencedError, IngestStore, StoredSource } from './ingest.store';
import type { IngestEntry } from './ingest.functions';
import { BoardParts, Pending } from './board-parts';
import { BatchTurns, ShardOrder } from './shard-order';
import type { IngestSource, SourceMessage } from './sources/source';

/** What a runner needs from its instance: the stores, the clock, the shared limits on in-flight work. */
export interface RunnerContext {
  store: IngestStore;
  boards: BoardCache;
  instance: string;
  nowMs: () => number;
  budgetFields: number;
  batch: number;
  waitMs: number;
  leaseMs: number;
  /** Resolves when this runner may apply a batch (bounded in-flight work, Redis not backlogged). */
  admit: () => Promise<() => void>;
  observe: (source: string, figures: { applied?: number; deadLettered?: number; lag?: number }) => void;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms).unref());

/**
 * Consumes one source on this instance while it holds the source's lease: reads a batch, applies it
 * (one script call per board shard, each recording the source's progress there, the next batch's
 * parts sent while its replies are awaited), writes dead letters, then acknowledges. A failure (Redis or the source away) leaves the batch unacknowledged and starts
 * over from the source's oldest unacknowledged message: whatever was applied is skipped the next time.
 */
export class SourceRunner {
  private readonly logger: Logger;
  private stopping = false;
  private loop?: Promise<void>;
  private epoch = 0;
  /** performance.now() until which the lease is surely ours (renewed every third of its length). */
  private leaseUntil = 0;
  private renewedAt = 0;
  private lagMeasuredAt = 0;
  /** The last batch's dead letters and acknowledgements, under way while the next batch is applied. */
  private settling: Promise<void> = Promise.resolve();
  /**
   * The fleet-wide totals of the batches settled, one after another: no apply waits for them (on the
   * service's connection they queue behind the next batch's apply). A failed one is a count lost, as
   * an instance killed between an acknowledgement and its totals loses it.
   */
  private totals: Promise<void> = Promise.resolve();
  /** Events applied by this runner since the last measurement (its throughput over that time). */
  private appliedSinceMeasured = 0;
  /** The last part sent to each shard: where the next one's turn comes. */
  private readonly order = new ShardOrder();
  private readonly parts: BoardParts;

  constructor(
    readonly stored: StoredSource,
    private readonly source: IngestSource,
    private readonly progress: string,
    private readonly context: RunnerContext,
  ) {
    this.logger = new Logger(`ingest:${stored.name}`);
    this.parts = new BoardParts(context.store, context.boards, progress, context.budgetFields);
  }

  get name(): string {
    return this.stored.name;
  }

  start(): void {
    this.loop ??= this.run();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    await this.loop;
  }

  private async run(): Promise<void> {
    while (!this.stopping) {
      try {
        if (await this.takeLease()) {
          await this.source.open();
          await this.consume();
        } else {
          await sleep(this.context.leaseMs / 3);
        }
      } catch (error) {
        await this.failed(error);
      }
    }
    await this.context.store.lease(this.name, this.context.instance, this.context.leaseMs, true).catch(() => 0);
    await this.source.close().catch(() => undefined);
  }

  private async failed(error: unknown): Promise<void> {
    const text = error instanceof Error ? error.message : String(error);
    this.logger.warn(`paused: ${text}`);
    await this.context.store
      .recordError(this.name, text, Math.floor(this.context.nowMs() / 1000))
      .catch(() => undefined);
    if (error instanceof IngestFencedError) this.leaseUntil = 0;
    await sleep(INGEST_RETRY_MS);
  }

  private async takeLease(): Promise<boolean> {
    const startedAt = performance.now();
    const epoch = await this.context.store.lease(this.name, this.context.instance, this.context.leaseMs);
    if (epoch === 0) {
      this.leaseUntil = 0;
      return false;
    }
    this.epoch = epoch;
    this.renewedAt = startedAt;
    // Counted from before the call: the lease may have been set at any moment of it.
    this.leaseUntil = startedAt + this.context.leaseMs * 0.8;
    return true;
  }

  private holding(): boolean {
    return performance.now() < this.leaseUntil;
  }

  /**
   * Reads and applies batches while the lease holds. Two batches are at Redis at once: a batch's parts
   * are sent as soon as the one before it is sent, and its replies awaited after (each part waits its
   * turn on its shard, ShardOrder: a part that reached Redis before the one ahead of it was applied is
   * refused there and sent again after it). Meanwhile the next batch is read and parsed (without
   * waiting for new messages: a read that waits would hold the acknowledgements behind it on the
   * source's connection) and the one before settles: its dead letters and acknowledgement, in batch
   * order, awaited before leaving: a failed one starts the source over, and a batch applied
   * meanwhile, unacknowledged, is delivered again and skipped.
   */
  private async consume(): Promise<void> {
    this.order.clear();
    let next: Promise<Pending[]> | undefined;
    // The last batch sent, until applied and its settle started (failed: the source starts over).
    let ahead: Promise<void> = Promise.resolve();
    try {
      while (!this.stopping && this.holding()) {
        if (!(await this.renewed())) return;
        if (performance.now() - this.lagMeasuredAt > 1000) await this.measureLag();
        const pending = await (next ?? this.read(this.context.waitMs));
        next = undefined;
        if (pending.length === 0) {
          await ahead;
          continue;
        }
        next = this.read(0);
        const release = await this.context.admit();
        // Lost while reading or waiting: the batch is left to the new holder, unapplied here.
        if (!this.holding()) {
          release();
          return;
        }
        const before = ahead;
        const batch = this.send(pending, before, release);
        ahead = batch.done;
        await batch.turned;
        await before;
      }
    } finally {
      // Read but not applied: left pending, the next holder (or this one, reopened) reads it again.
      await Promise.allSettled([next, ahead]);
      this.order.clear();
      const settling = this.settling;
      this.settling = Promise.resolve();
      await settling;
      await this.totals;
    }
  }

  /** The next batch, parsed as it arrives: while the batch before it is applied, when read ahead. */
  private async read(waitMs: number): Promise<Pending[]> {
    const messages = await this.source.next(this.context.batch, Math.min(waitMs, this.context.leaseMs / 4));
    const board = this.stored.declaration.board;
    const pending = new Array<Pending>(messages.length);
    for (let i = 0; i < messages.length; i++) {
      const message = messages[i];
      // Not clamped to now here (Infinity): an event's time is set when it is applied (timeOf).
      const event =
        message.payload === ''
          ? 'INVALID: the entry has no field `event`'
          : parseEvent(message.payload, board, Infinity);
      pending[i] =
        typeof event === 'string' ? { message, refusal: event } : { message, event, entry: entryOf(message, event) };
    }
    return pending;
  }

  /** Renews the lease every third of its length; false when it was lost (the new holder starts over). */
  private async renewed(): Promise<boolean> {
    if (performance.now() - this.renewedAt <= this.context.leaseMs / 3) return true;
    const epoch = this.epoch;
    return (await this.takeLease()) && this.epoch === epoch;
  }

  /** The source's lag, and the events/s this runner applied since the last measurement (0 at the first). */
  private async measureLag(): Promise<void> {
    const now = performance.now();
    const throughput = this.lagMeasuredAt === 0 ? 0 : (this.appliedSinceMeasured * 1000) / (now - this.lagMeasuredAt);
    this.lagMeasuredAt = now;
    this.appliedSinceMeasured = 0;
    const lag = await this.source.lag();
    this.context.observe(this.name, { lag });
    await this.context.store.recordFigures(this.name, lag, Math.round(throughput));
  }

  /**
   * Sends one batch, its parts in their turns on their shards (`turned`: every part has its turn, the
   * next batch may go); `done` once applied, the batch `before` it settled first, and its own settle
   * (dead letters, acknowledgements) started. `release` frees its place among the in-flight batches.
   */
  private send(pending: Pending[], before: Promise<void>, release: () => void) {
    const turns = this.order.batch();
    const { turned, applied } = this.applyBatch(pending, turns);
    const counted = applied.finally(release);
    counted.then(
      () => turns.finish(),
      (error: unknown) => turns.finish(error),
    );
    const done = counted.then(async (total) => {
      this.appliedSinceMeasured += total;
      await before;
      // The batch before settled first: one settle under way at a time, acknowledgements in order.
      await this.settling;
      const settled = this.settle(pending, total);
      // Handled where it is awaited (the next batch, or leaving consume); no unhandled rejection meanwhile.
      settled.catch(() => undefined);
      this.settling = settled;
    });
    done.catch(() => undefined);
    return { turned, done };
  }

  /** One batch's parts, per board and shard: the events applied (`applied`), and when each part has its turn (`turned`). */
  private applyBatch(pending: Pending[], turns: BatchTurns) {
    const nowMs = this.context.nowMs();
    const byBoard = new Map<string, Pending[]>();
    for (const entry of pending) {
      if (!entry.event) continue;
      entry.entry!.atMs = timeOf(entry.event, nowMs);
      const list = byBoard.get(entry.event.board);
      if (list) list.push(entry);
      else byBoard.set(entry.event.board, [entry]);
    }
    const turned: Promise<void>[] = [];
    const counts = [...byBoard].map(([board, entries]) => {
      let ready!: () => void;
      turned.push(new Promise<void>((resolve) => (ready = resolve)));
      const applied = this.parts.apply(board, this.epoch, entries, nowMs, turns, ready);
      // A board not found, or failed before its parts were sent, takes no turn.
      applied.then(ready, ready);
      return applied;
    });
    const applied = Promise.all(counts).then((each) => each.reduce((sum, count) => sum + count, 0));
    return { turned: Promise.all(turned), applied };
  }

  /** After a batch is applied: its dead letters, the acknowledgement of the rest, then the totals (not awaited). */
  private async settle(pending: Pending[], applied: number): Promise<void> {
    const refused = pending.filter((entry) => entry.refusal !== undefined);
    // Dead letters, acknowledgements and totals are independent of each other: sent together.
    const [written] = await Promise.all([
      Promise.all(refused.map((entry) => this.deadLetter(entry))),
      this.source.ack(pending.filter((entry) => entry.refusal === undefined).map((entry) => entry.message)),
    ]);
    const deadLettered = written.filter(Boolean).length;
    this.context.observe(this.name, { applied, deadLettered });
    this.totals = this.totals
      .then(() => this.context.store.addTotals(this.name, applied, deadLettered))
      .catch((error: unknown) => this.logger.warn(`totals not recorded: ${String(error)}`));
  }

  /** Writes a refused message's dead letter (true: by this call), then forgets the shard's refusal. */
  private async deadLetter(entry: Pending): Promise<boolean> {
    const written = await this.source.deadLetter(entry.message, entry.refusal!);
    if (entry.refusedOn) await this.context.store.forgetRefusal(entry.refusedOn, this.progress, entry.message.id);
    return written;
  }
}

/** A message's entry for the apply script; its time (atMs) is set when the batch is applied. */
function entryOf(message: SourceMessage, event: IngestEvent): IngestEntry {
  const entry: IngestEntry = { id: message.id, item: event.item, amount: event.amount, atMs: 0 };
  if (event.segments) entry.segments = event.segments;
  if (event.actor) entry.actor = event.actor;
  return entry;
}

/** An event's time when applied at `nowMs`: its own `at`, a time after now counting as now; none: now. */
function timeOf(event: IngestEvent, nowMs: number): number {
  return event.atMs === undefined ? nowMs : Math.min(event.atMs, nowMs);
}
