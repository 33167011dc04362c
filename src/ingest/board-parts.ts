import { NotFoundError } from '../common/errors';
import { RANKING_MESSAGES as M } from '../ranking/core/ranking.messages';
import type { BoardCache } from '../ranking/boards/board-cache';
import type { PreparedBoard, ShardKeys } from '../ranking/core/board';
import { retractedOf } from '../ranking/core/ranking.errors';
import type { IngestEvent } from './ingest-event';
import { IngestOrderError, IngestStore } from './ingest.store';
import type { ApplyReply, EntryOutcome, IngestEntry } from './ingest.functions';
import type { BatchTurns, ShardTurn } from './shard-order';
import type { SourceMessage } from './sources/source';

/**
 * A message on its way: its event (and the entry it becomes, its time set when applied), or why it
 * goes to the dead letters; and where it was applied.
 */
export interface Pending {
  message: SourceMessage;
  event?: IngestEvent;
  entry?: IngestEntry;
  refusal?: string;
  /** The shard that refused it (its remembered refusal is cleared once the dead letter is written). */
  refusedOn?: ShardKeys;
}

/** Applies one source's batches to one board at a time: a part per board shard, each in its turn there (ShardOrder). */
export class BoardParts {
  constructor(
    private readonly store: IngestStore,
    private readonly boards: BoardCache,
    /** The source's progress name (progressName). */
    private readonly progress: string,
    private readonly budgetFields: number,
  ) {}

  /**
   * The board's part of a batch, one script call per shard in parallel, each in its turn on its shard
   * (`ready` once every part has one). When the board's config changed, BoardCache runs it again with
   * the new one: parts applied the first time are skipped then. Answers the events applied now; sets
   * each entry's refusal, if any.
   */
  async apply(
    name: string,
    epoch: number,
    entries: Pending[],
    nowMs: number,
    turns: BatchTurns,
    ready: () => void,
  ): Promise<number> {
    let applied = 0;
    try {
      await this.boards.withBoard(name, async (board) => {
        const parts = partsOf(entries, board);
        const sent = [...parts].map(([shard, part]) => {
          const turn = turns.turn(shard.keys.tag, part[part.length - 1].message.id);
          return this.applyPart(board, shard, part, turn, { epoch, nowMs });
        });
        ready();
        for (const [shard, part, reply] of await Promise.all(sent)) {
          applied += reply.applied;
          reply.outcomes.forEach((outcome, i) => refusedBy(part[i], outcome, shard));
        }
      });
    } catch (error) {
      if (!(error instanceof NotFoundError)) throw error;
      for (const entry of entries) entry.refusal = `BOARD_NOT_FOUND: board "${name}" does not exist`;
    }
    return applied;
  }

  /**
   * One shard's part, in its turn: refused (nothing applied) when it reached Redis before the part
   * ahead of it on the shard was applied, it is sent again once that one is (that one failed: so
   * does this batch; refused again: the shard's progress went back, the source starts over).
   */
  private async applyPart(
    board: PreparedBoard,
    shard: ShardKeys,
    part: Pending[],
    turn: ShardTurn,
    { epoch, nowMs }: { epoch: number; nowMs: number },
  ): Promise<[ShardKeys, Pending[], ApplyReply]> {
    const call = {
      board,
      shard,
      progress: this.progress,
      epoch,
      after: turn.after,
      entries: part.map((entry) => entry.entry!),
      nowMs,
      budgetFields: this.budgetFields,
    };
    let reply: ApplyReply;
    try {
      reply = await this.store.apply(call);
    } catch (error) {
      if (!(error instanceof IngestOrderError) || !turn.before) throw error;
      await turn.before;
      reply = await this.store.apply(call);
    }
    turn.applied();
    return [shard, part, reply];
  }
}

/** The board's part of a batch by shard (this config's refusals set: a rerun with a new one decides again). */
function partsOf(entries: Pending[], board: PreparedBoard): Map<ShardKeys, Pending[]> {
  const parts = new Map<ShardKeys, Pending[]>();
  for (const entry of entries) {
    entry.refusal = boardRefusal(entry.event!, board);
    if (entry.refusal) continue;
    const shard = board.shardOf(entry.event!.item);
    const part = parts.get(shard);
    if (part) part.push(entry);
    else parts.set(shard, [entry]);
  }
  return parts;
}

/** As the HTTP batch: segments on a board without them, an actor on a board without actors, are invalid. */
function boardRefusal(event: IngestEvent, board: PreparedBoard): string | undefined {
  if (event.segments && board.config.segmentsMax === undefined)
    return `INVALID: ${M.noSegments(board.config.name, 'segments')}`;
  if (event.actor !== undefined && !board.config.actors) return `INVALID: ${M.noActors(board.config.name, 'actor')}`;
  return undefined;
}

/** Why the apply script refused an entry, as its dead letter says (AT_OUT_OF_SPAN: the default). */
const REFUSALS: Record<string, string> = {
  BOARD_FULL: 'BOARD_FULL: the board holds its maxItems items',
  AGGREGATE_MISMATCH: 'AGGREGATE_MISMATCH: the board keeps a max / min / last score per item; events add amounts',
  SEGMENT_LIMIT: "SEGMENT_LIMIT: the event names a new segment beyond the board's segments.max",
};

/** Records the apply script's refusal of an entry (its dead letter's reason) and the shard that remembers it. */
function refusedBy(entry: Pending, outcome: EntryOutcome, shard: ShardKeys): void {
  if (outcome.kind !== 'refused') return;
  // "RETRACTED <actor|item> <until ms>": worded as the HTTP 403 RETRACTED.
  const retracted = retractedOf(new Error(`TB_${outcome.reason}`));
  entry.refusal = retracted
    ? `RETRACTED: ${retracted.message}`
    : (REFUSALS[outcome.reason] ?? `${outcome.reason}: no window holds the event's time any more`);
  entry.refusedOn = shard;
}
