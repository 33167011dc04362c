import { Logger } from '@nestjs/common';
import { NotFoundError } from '../common/errors';
import type { BoardCache } from '../ranking/boards/board-cache';
import type { PreparedBoard, ShardKeys } from '../ranking/core/board';
import { retractedOf } from '../ranking/core/ranking.errors';
import { GROUP_OF_MESSAGES } from '../ranking/options/group-of/group-of.option';
import { IngestEvent, parseEvent } from './ingest-event';
import { INGEST_APPLY_WRITES } from './ingest.limits';
import { IngestFencedError, IngestStore, StoredSource } from './ingest.store';
import type { EntryOutcome, IngestEntry } from './ingest.functions';
import type { IngestSource, SourceMessage } from './sources/source';
import { SEGMENTS_MESSAGES } from '../ranking/options/segments/segments.option';
import { ACTORS_MESSAGES } from '../ranking/options/actors/actors.option';

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
  retryMs: number;
  /** The boards' alias maps (AliasMap): what this instance knows, and the map read at most once a second. */
  aliases: {
    known(board: PreparedBoard): Promise<ReadonlyMap<string, string>>;
    of(board: PreparedBoard): Promise<ReadonlyMap<string, string>>;
  };
  /** Resolves when this runner may apply a batch (bounded in-flight work, Redis not backlogged). */
  admit: () => Promise<() => void>;
  observe: (source: string, figures: { applied?: number; deadLettered?: number; lag?: number }) => void;
}

/** A message on its way: its event (and the entry it becomes), or why it is dead-lettered; where it was applied. */
interface Pending {
  message: SourceMessage;
  event?: IngestEvent;
  entry?: IngestEntry;
  refusal?: string;
  /** The shard that refused it (its remembered refusal is cleared once the dead letter is written). */
  refusedOn?: ShardKeys;
  /** Named an alias: its shard and the canonical item's (a refusal there, a mark here, cleared once acknowledged). */
  resolved?: { from: ShardKeys; on: ShardKeys };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms).unref());

/**
 * Consumes one source on this instance while it holds the source's lease: reads a batch, applies it
 * (one script call per board shard, each recording the source's progress there), writes dead letters,
 * then acknowledges. A failure (Redis or the source away) leaves the batch unacknowledged and starts
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

  constructor(
    readonly stored: StoredSource,
    private readonly source: IngestSource,
    private readonly progress: string,
    private readonly context: RunnerContext,
  ) {
    this.logger = new Logger(`ingest:${stored.name}`);
  }

  get name(): string {
    return this.stored.name;
  }

  start(): void {
    this.loop ??= this.run();
  }

  /** Stops at once: a batch read but not yet applied is left pending (nothing is applied after this call). */
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
    await sleep(this.context.retryMs);
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
   * Reads and applies batches while the lease holds. Two things overlap the apply of a batch: the
   * read and parse of the next one (without waiting for new messages: a read that waits would hold
   * the acknowledgements behind it on the source's connection) and the dead letters and
   * acknowledgement of the previous one (settle), awaited once the batch is applied, before its own
   * settle starts, and before leaving: a failed one starts the source over, and the batch applied
   * meanwhile, unacknowledged, is delivered again and skipped.
   */
  private async consume(): Promise<void> {
    let next: Promise<Pending[]> | undefined;
    try {
      while (!this.stopping && this.holding()) {
        if (!(await this.renewed())) return;
        if (performance.now() - this.lagMeasuredAt > 1000) await this.measureLag();
        const pending = await (next ?? this.read(this.context.waitMs));
        next = undefined;
        if (pending.length === 0) continue;
        next = this.read(0);
        const done = await this.context.admit();
        try {
          // Lost or stopped while reading or waiting: the batch is left to the next holder, unapplied here.
          if (this.stopping || !this.holding()) return;
          await this.apply(pending);
        } finally {
          done();
        }
      }
    } finally {
      // Read but not applied: left pending, the next holder (or this one, reopened) reads it again.
      await next?.catch(() => undefined);
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

  /** One batch: applied per board shard; its dead letters and acknowledgements then start (settle). */
  private async apply(pending: Pending[]): Promise<void> {
    const nowMs = this.context.nowMs();
    const byBoard = new Map<string, Pending[]>();
    for (const entry of pending) {
      if (!entry.event) continue;
      entry.entry!.atMs = timeOf(entry.event, nowMs);
      const list = byBoard.get(entry.event.board);
      if (list) list.push(entry);
      else byBoard.set(entry.event.board, [entry]);
    }
    const applied = await Promise.all([...byBoard].map(([board, entries]) => this.applyToBoard(board, entries, nowMs)));
    const total = applied.reduce((sum, count) => sum + count, 0);
    this.appliedSinceMeasured += total;
    // The batch before settled first: one settle under way at a time.
    await this.settling;
    const settled = this.settle(pending, total);
    // Handled where it is awaited (the next batch, or leaving consume); no unhandled rejection meanwhile.
    settled.catch(() => undefined);
    this.settling = settled;
  }

  /** After a batch is applied: its dead letters, the acknowledgement of the rest, then the totals (not awaited). */
  private async settle(pending: Pending[], applied: number): Promise<void> {
    const refused = pending.filter((entry) => entry.refusal !== undefined);
    // Dead letters, acknowledgements and totals are independent of each other: sent together.
    const [written] = await Promise.all([
      Promise.all(refused.map((entry) => this.deadLetter(entry))),
      this.source.ack(pending.filter((entry) => entry.refusal === undefined).map((entry) => entry.message)),
    ]);
    await Promise.all(pending.map((entry) => this.forgetResolved(entry)));
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

  /** Once a message applied resolved is acknowledged: the alias's shard's refusal and the canonical's mark. */
  private async forgetResolved(entry: Pending): Promise<void> {
    if (!entry.resolved || entry.refusal !== undefined) return;
    const id = entry.message.id;
    await this.context.store.forgetRefusal(entry.resolved.from, this.progress, id);
    await this.context.store.forgetResolved(entry.resolved.on, this.progress, id);
  }

  /**
   * The board's part of a batch: its shards' parts in parallel (applyShardPart), each item resolved
   * through the aliases this instance knows (no read: one call per shard); then the events an alias's
   * shard refused, sent again resolved through the map read again (at most once a second), as an HTTP
   * write is (AliasMap.resolving). A changed config reruns it (BoardCache): applied parts are skipped.
   * Answers the events applied now; sets each entry's refusal, if any.
   */
  private async applyToBoard(name: string, entries: Pending[], nowMs: number): Promise<number> {
    // Counted as each call answers: a part applied before a rerun (or a shard's failure) stays counted.
    const counted = { applied: 0 };
    try {
      await this.context.boards.withBoard(name, async (board) => {
        const known = await this.context.aliases.known(board);
        for (const entry of entries) {
          // This config's answer: a rerun with a new one decides again.
          entry.refusal = boardRefusal(entry.event!, board);
          resolve(entry, board, known);
        }
        await this.applyParts(board, entries, nowMs, counted);
        const map = entries.some(refusedAsAlias) ? await this.context.aliases.of(board) : undefined;
        const again = entries.filter((entry) => refusedAsAlias(entry) && map?.has(entry.event!.item));
        for (const entry of again) resolve(entry, board, map!, true);
        await this.applyParts(board, again, nowMs, counted);
      });
    } catch (error) {
      if (!(error instanceof NotFoundError)) throw error;
      for (const entry of entries) entry.refusal = `BOARD_NOT_FOUND: board "${name}" does not exist`;
    }
    return counted.applied;
  }

  /** Entries (refusals set aside) by their shard, each shard's applied in parallel. */
  private async applyParts(board: PreparedBoard, entries: Pending[], nowMs: number, counted: { applied: number }) {
    const parts = new Map<ShardKeys, Pending[]>();
    for (const entry of entries) {
      if (entry.refusal) continue;
      const shard = board.shardOf(entry.entry!.item);
      const part = parts.get(shard);
      if (part) part.push(entry);
      else parts.set(shard, [entry]);
    }
    await Promise.all([...parts].map(([shard, part]) => this.applyShardPart(board, shard, part, nowMs, counted)));
  }

  /**
   * A shard's part, in calls of at most INGEST_APPLY_WRITES event-window writes, in id order, each
   * awaited before the next: the shard's recorded progress only ever covers events applied, so a call
   * that fails leaves the rest to be delivered again. Adds the events each call applied to `counted`.
   */
  private async applyShardPart(
    board: PreparedBoard,
    shard: ShardKeys,
    part: Pending[],
    nowMs: number,
    counted: { applied: number },
  ): Promise<void> {
    const callEvents = Math.max(1, Math.floor(INGEST_APPLY_WRITES / board.config.windows.length));
    for (let first = 0; first < part.length; first += callEvents) {
      const chunk = part.slice(first, first + callEvents);
      const reply = await this.context.store.apply({
        board,
        shard,
        progress: this.progress,
        epoch: this.epoch,
        entries: chunk.map((entry) => entry.entry!),
        nowMs,
        budgetFields: this.context.budgetFields,
      });
      counted.applied += reply.applied;
      reply.outcomes.forEach((outcome, i) => settle(chunk[i], outcome, shard));
    }
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

/** As the HTTP batch: segments on a board without them, an actor on a board without actors, are invalid; a group board takes no events. */
function boardRefusal(event: IngestEvent, board: PreparedBoard): string | undefined {
  const { name, segmentsMax, actors, groupOf } = board.config;
  if (event.segments && segmentsMax === undefined) return `INVALID: ${SEGMENTS_MESSAGES.noSegments(name, 'segments')}`;
  if (event.actor !== undefined && !actors) return `INVALID: ${ACTORS_MESSAGES.noActors(name, 'actor')}`;
  if (groupOf) return `GROUP_BOARD_READ_ONLY: ${GROUP_OF_MESSAGES.readOnly(name, groupOf.board)}`;
  return undefined;
}

/**
 * The entry naming the canonical item of the alias its event names, if `map` knows it: marked resolved,
 * applied once by its mark on the canonical item's shard whatever that shard's progress says.
 */
function resolve(entry: Pending, board: PreparedBoard, map: ReadonlyMap<string, string>, refused = false) {
  const item = map.get(entry.event!.item);
  entry.entry = { ...entry.entry!, item: item ?? entry.event!.item, resolved: item === undefined ? undefined : true };
  entry.resolved = item === undefined ? undefined : { from: board.shardOf(entry.event!.item), on: board.shardOf(item) };
  if (refused) [entry.refusal, entry.refusedOn] = [undefined, undefined];
}

/** Refused by its item's block: an alias's (or a retracted item's) shard refused it. */
function refusedAsAlias(entry: Pending): boolean {
  return entry.refusal?.startsWith('RETRACTED: item') === true;
}

/** Why the apply script refused an entry, as its dead letter says (AT_OUT_OF_SPAN: the default). */
const REFUSALS: Record<string, string> = {
  BOARD_FULL: 'BOARD_FULL: the board holds its maxItems items',
  AGGREGATE_MISMATCH: 'AGGREGATE_MISMATCH: the board keeps a max / min / last score per item; events add amounts',
  SEGMENT_LIMIT: "SEGMENT_LIMIT: the event names a new segment beyond the board's segments.max",
};

function settle(entry: Pending, outcome: EntryOutcome, shard: ShardKeys): void {
  if (outcome.kind !== 'refused') return;
  // "RETRACTED <actor|item> <until ms>": worded as the HTTP 403 RETRACTED.
  const retracted = retractedOf(new Error(`TB_${outcome.reason}`));
  entry.refusal = retracted
    ? `RETRACTED: ${retracted.message}`
    : (REFUSALS[outcome.reason] ?? `${outcome.reason}: no window holds the event's time any more`);
  entry.refusedOn = shard;
}
