import { join } from 'node:path';
import { flagReply, intReply, oneOfReply, Reply } from '../redis/replies';
import { RESEND_GUARD_MS } from '../common/limits';
import {
  decodeIdempotent,
  decodeIdempotentReply,
  IdemCall,
  IdempotencyKeyReusedError,
  IdempotentAnswerUnfundedError,
  idemArgs,
  Idempotent,
  retentionArg,
} from '../redis/idempotency';
import { growthRefusalOf } from '../redis/refusals';
import {
  KEYS_LIBRARY,
  ScriptCall,
  ScriptCommand,
  ScriptCommandName,
  typedScript,
  WRITE_LIBRARIES,
} from '../redis/scripts';
import { PreparedBoard, ShardKeys, windowArgsOf } from './board';
import type { BoardKeys, RankingKeys } from './ranking.keys';
import type { ScoredItem } from './shard-math';
import type { ViewConfig } from './trending-math';
import type { WindowConfig, WindowSpec } from './window-math';

declare module 'ioredis' {
  interface RedisCommander<Context> {
    tbRankIncrement: ScriptCommand<Context>;
    tbRankIncrementBatch: ScriptCommand<Context>;
    tbRankIncrements: ScriptCommand<Context>;
    tbRankLike: ScriptCommand<Context>;
    tbRankExpire: ScriptCommand<Context>;
    tbRankReadTop: ScriptCommand<Context>;
    tbRankReadItem: ScriptCommand<Context>;
    tbRankReadAround: ScriptCommand<Context>;
    tbRankReadNeighbours: ScriptCommand<Context>;
    tbRankCountAbove: ScriptCommand<Context>;
    tbRankCountAboveShards: ScriptCommand<Context>;
    tbRankBoardPut: ScriptCommand<Context>;
    tbRankBoardDelete: ScriptCommand<Context>;
    tbRankShardSync: ScriptCommand<Context>;
    tbRankRequestClaim: ScriptCommand<Context>;
    tbRankRequestComplete: ScriptCommand<Context>;
    tbRankDueClaim: ScriptCommand<Context>;
    tbRankDueComplete: ScriptCommand<Context>;
    tbRankSweepTurn: ScriptCommand<Context>;
    tbRankHistoryRead: ScriptCommand<Context>;
    tbRankHistoryItem: ScriptCommand<Context>;
    tbRankHistoryCount: ScriptCommand<Context>;
    tbRankReadView: ScriptCommand<Context>;
  }
}

/** A retry-safe request on a sharded board and the shard its ledger entry lives on (see request_claim.lua). */
export interface LedgerCall {
  ledger: ShardKeys;
  nowMs: number;
  idem: IdemCall;
}

/** What the ledger knows of a request: new, claimed before but not answered, or answered (its body). */
export type LedgerEntry = { state: 'claimed' | 'pending' } | { state: 'answered'; body: string };

/** Score and competition rank of an item in one window (rank null: not ranked). */
export interface Standing {
  score: number;
  rank: number | null;
}

export interface BatchEntry {
  item: string;
  amount: number;
  /** The event's time (unix ms, not after now); absent: now. */
  atMs?: number;
  /** The item's creation time (unix ms), for a hot view's firstSeen; absent: none. */
  createdMs?: number;
}

/** What every script on a board's keys gets: the cached config (its version is checked), the time and the expiry budget. */
export interface BoardCall {
  board: PreparedBoard;
  shard: ShardKeys;
  nowMs: number;
  /** Most expired-slot fields one call drains (EXPIRE_CHUNK). */
  budgetFields: number;
}

/** A read of one window of one shard. */
export interface WindowCall extends BoardCall {
  window: WindowConfig;
}

/** One item increment of a call: its own key (none: undefined), growth allowance and event time. */
export interface CoalescedIncrement {
  item: string;
  amount: number;
  idem?: IdemCall;
  newItems: number;
  /** The event's time (unix ms, not after now; absent: now). */
  atMs?: number;
  /** The item's creation time (unix ms; absent: none), for a hot view's firstSeen. */
  createdMs?: number;
}

/** What one request of a coalesced call got: its own answer, or the refusal of its growth. */
/** What one request of an increment call got: its own answer, or what refused it (TB_AT_OUT_OF_SPAN, growth, a reused key). */
export type CoalescedAnswer = Idempotent<StandingsReply> | Error;

/** A write's standing in one window, with the item's rank in the window's latest snapshot (null: absent). */
export interface WindowStanding extends Standing {
  previousRank: number | null;
}

/** A write's figures per window, in the order of the window names it was answered with. */
export interface StandingsReply {
  draining: boolean;
  standings: WindowStanding[];
}

/** A snapshot as one shard stored it: its boundary (unix s) and rows, best first. */
export interface StoredSnapshot {
  atSec: number;
  rows: ScoredItem[];
}

/** An item in one snapshot of one shard: its score (0: not listed) and the rows above it (-1: not listed). */
export interface SnapshotPoint {
  atSec: number;
  score: number;
  above: number;
}

/** A listing page: rows in board order, where the first sits and how many score above it. */
export interface ListingReply {
  draining: boolean;
  /** 0-based position of the first row in the whole listing; -1 when an around read found no item. */
  firstPosition: number;
  higherThanFirst: number;
  rows: ScoredItem[];
  /** Each row's rank in the shard's latest snapshot (null: absent). */
  previousRanks: Array<number | null>;
}

/** What an expire call left: expired data still to drain, and when the shard next has something to expire. */
export interface ExpireReply {
  draining: boolean;
  /** Unix ms; null when the shard holds no slot and no like. */
  nextDueMs: number | null;
}

/** Boards claimed by one scheduler pass, and when the claims lapse (the token due_complete checks). */
export interface DueClaim {
  leaseEndMs: number;
  boards: string[];
}

export type BoardPutReply =
  | {
      status: 'created' | 'updated' | 'unchanged';
      version: string;
      windowsJson: string;
      shards: number;
      revision: number;
      mostShards: number;
      /** null: no cap */
      maxItems: number | null;
      viewsJson: string;
    }
  | { status: 'conflict'; message: string };

/** What a view read asks for (read_view.lua): a page, one item, an item's neighbours, or a count above a rank score. */
export type ViewRead =
  | { op: 'top'; offset: number; limit: number }
  | { op: 'item'; item: string }
  | { op: 'around'; item: string; radius: number }
  | { op: 'count'; rankScore: number };

/** A read of one view of one shard: the windows it reads (its window first, then a rising view's baseline). */
export interface ViewCall extends BoardCall {
  view: ViewConfig;
  windows: WindowConfig[];
  read: ViewRead;
}

/** A rising row's figures as stored: sums in its two windows, when it entered the view, its last two slots' counts. */
export interface RisingFigures {
  observed: number;
  baseline: number;
  sinceSec: number;
  currentSlot: number;
  previousSlot: number;
}

/** A view row: its rank score (decay: forward-decayed against the landmark) and a rising row's figures. */
export interface ViewRow extends ScoredItem {
  rising?: RisingFigures;
}

/** What read_view answers: a and b as its header says for the read. */
export interface ViewReply {
  draining: boolean;
  landmarkSec: number;
  a: number;
  b: number;
  rows: ViewRow[];
}

const dir = join(__dirname, 'scripts');
const snapshotLibrary = join(dir, 'snapshot_lib.lua');
const viewsLibrary = join(dir, 'views_lib.lua');
const windowLibrary = [KEYS_LIBRARY, viewsLibrary, join(dir, 'window_lib.lua'), snapshotLibrary];
const writeLibrary = [
  ...WRITE_LIBRARIES,
  viewsLibrary,
  join(dir, 'window_lib.lua'),
  snapshotLibrary,
  join(dir, 'board_write_lib.lua'),
];
/** The libraries every item-writing script of a board prepends, for write scripts of other features (ingest). */
export const RANKING_WRITE_LIBRARIES: readonly string[] = writeLibrary;

/** Snapshot rows as stored: "\x1e<item>\x1f<score>" each, best first (snapshot_lib.lua). */
export function parseSnapshotRows(packed: string): ScoredItem[] {
  if (packed === '') return [];
  return packed
    .slice(1)
    .split('\x1e')
    .map((row) => {
      const cut = row.indexOf('\x1f');
      return { item: row.slice(0, cut), score: Number(row.slice(cut + 1)) };
    });
}

/** An idempotent write: its key (when the client sent one) and the window names its answer is built with. */
export interface WriteCall extends BoardCall {
  idem?: IdemCall;
}

/** The window names a write's answer is keyed by: stored with a retry-safe write, so a replay rebuilds it as it was. */
function windowNames(call: BoardCall): string {
  return call.board.windowNames;
}

/** [version, now, budget, W, period_1, interval_1, createdAtMs_1, ...]: what every multi-window script starts with. */
function boardArgs(call: BoardCall, windowArgs = call.board.windowArgs): Array<string | number> {
  return [call.board.config.version, call.nowMs, call.budgetFields, ...windowArgs];
}

/** The single-window reads: [cfg, slots, top] and [version, now, budget, period, interval, ...extra]. */
function windowRead(call: WindowCall, extra: Array<string | number>): ScriptCall {
  const { keys } = call.shard;
  const { window } = call;
  return {
    keys: [keys.cfg(), keys.slots(window.name), keys.top(window.name)],
    args: [call.board.config.version, call.nowMs, call.budgetFields, window.periodSec, window.intervalSec, ...extra],
  };
}

/**
 * [score_1, rank_1, ..., score_W, rank_W, previous_1, ..., previous_W] from entry `first` on. A reply
 * stored before writes answered previous ranks (pairs only) replays with previousRank null.
 */
function standingsOf(reply: Reply, first: number, windowCount: number): WindowStanding[] {
  const withPrevious = reply.length - first === 3 * windowCount;
  if (!withPrevious) reply.expectLength(first + 2 * windowCount);
  return Array.from({ length: windowCount }, (_, w) => ({
    score: reply.int(first + 2 * w),
    rank: reply.int(first + 2 * w + 1) || null,
    previousRank: withPrevious ? reply.int(first + 2 * windowCount + w) || null : null,
  }));
}

/** A write's standings, once its context (the window names it was answered with) is known. */
function withStandings<T>(
  decoded: Idempotent<{ reply: Reply; rest: T }>,
  first: number,
): Idempotent<T & StandingsReply> {
  const { reply, rest } = decoded.value;
  const windowCount = decoded.context.split(',').length;
  return {
    ...decoded,
    value: { ...rest, draining: reply.flag(0), standings: standingsOf(reply, first, windowCount) },
  };
}

/** What an increment answers for one request: { outcome, context, [created...], draining, standings... }. */
function incrementAnswer(answer: Reply, idem: IdemCall | undefined): CoalescedAnswer {
  // One request's reused key or refused growth refuses that request only.
  if (answer.int(0) === 2) return new IdempotencyKeyReusedError();
  if (answer.int(0) === 3) return new IdempotentAnswerUnfundedError();
  // The refusal as a script error would carry it: the store turns it into its domain error.
  if (answer.int(0) === -1) {
    const refusal = new Error(answer.string(1));
    return growthRefusalOf(refusal) ?? refusal;
  }
  return withStandings(
    decodeIdempotentReply(answer, idem, (reply) => ({ reply, rest: {} }), 2),
    1,
  );
}

/** increment.lua's keys and arguments for the given requests, applied in this order. */
function incrementCall(call: BoardCall, requests: CoalescedIncrement[]): ScriptCall {
  return {
    keys: call.shard.incrementKeys,
    args: [
      ...boardArgs(call),
      windowNames(call),
      ...requests.flatMap((request) => [
        request.item,
        request.amount,
        request.idem?.key ?? '',
        request.idem?.fingerprint ?? '',
        request.idem ? retentionArg(request.idem) : 0,
        request.newItems,
        request.atMs ?? call.nowMs,
        request.createdMs ?? '',
      ]),
    ],
  };
}

/** (item, score) pairs from entry `first` on. */
function rowsOf(reply: Reply, first: number): ScoredItem[] {
  reply.expectPairsFrom(first);
  const rows: ScoredItem[] = [];
  for (let i = first; i < reply.length; i += 2) rows.push({ item: reply.string(i), score: reply.number(i + 1) });
  return rows;
}

/** A single-window read answering a listing page: `extraArgs` follow the common window arguments. */
function listingRead<Call extends WindowCall>(
  name: ScriptCommandName,
  file: string,
  extraArgs: (call: Call) => Array<string | number>,
) {
  return typedScript({
    name,
    file: join(dir, file),
    libraries: windowLibrary,
    numberOfKeys: 3,
    build: (call: Call) => windowRead(call, extraArgs(call)),
    decode: (raw): ListingReply => {
      const reply = new Reply(name, raw).expectLength(4, true);
      const rows = rowsOf(reply, 4);
      const previous = reply.nested(3).expectLength(rows.length);
      return {
        draining: reply.flag(0),
        firstPosition: reply.int(1),
        higherThanFirst: reply.int(2),
        rows,
        previousRanks: rows.map((_, i) => previous.int(i) || null),
      };
    },
  });
}

/** Every ranking script: keys and arguments built from domain values, replies checked (see each .lua header). */
export const RANKING_SCRIPTS = {
  /** One item increment (increment.lua with one request); a refusal of the request is thrown. */
  increment: typedScript({
    name: 'tbRankIncrement',
    file: join(dir, 'increment.lua'),
    libraries: writeLibrary,
    numberOfKeys: 'dynamic',
    build: (call: WriteCall & Omit<CoalescedIncrement, 'idem'>) =>
      incrementCall(call, [
        {
          item: call.item,
          amount: call.amount,
          idem: call.idem,
          newItems: call.newItems,
          atMs: call.atMs,
          createdMs: call.createdMs,
        },
      ]),
    /** created: [new items, due time for the index (ms; 0: none)] */
    decode: (raw, call): Idempotent<StandingsReply> => {
      const answer = incrementAnswer(new Reply('tbRankIncrement', raw).expectLength(1).nested(0), call.idem);
      if (answer instanceof Error) throw answer;
      return answer;
    },
  }),

  /** Item increments that arrived together for one shard (WRITE_COALESCE_MS), applied in order by one call. */
  increments: typedScript({
    name: 'tbRankIncrements',
    file: join(dir, 'increment.lua'),
    libraries: writeLibrary,
    numberOfKeys: 'dynamic',
    build: (call: BoardCall & { requests: CoalescedIncrement[] }) => incrementCall(call, call.requests),
    /** Each request's answer as `increment` decodes it, or its refusal. */
    decode: (raw, call): CoalescedAnswer[] => {
      const reply = new Reply('tbRankIncrements', raw).expectLength(call.requests.length);
      return call.requests.map((request, i) => incrementAnswer(reply.nested(i).expectLength(2, true), request.idem));
    },
  }),

  incrementBatch: typedScript({
    name: 'tbRankIncrementBatch',
    file: join(dir, 'increment_batch.lua'),
    libraries: writeLibrary,
    numberOfKeys: 'dynamic',
    build: (call: WriteCall & { entries: BatchEntry[]; newItems: number }) => ({
      keys: call.shard.incrementKeys,
      args: [
        ...boardArgs(call),
        ...idemArgs(call.idem, ''),
        call.newItems,
        ...call.entries.flatMap((entry) => [entry.item, entry.amount, entry.atMs ?? call.nowMs, entry.createdMs ?? '']),
      ],
    }),
    /** created: [new items, due time for the index (ms; 0: none)] */
    decode: (raw, call) =>
      decodeIdempotent(
        'tbRankIncrementBatch',
        raw,
        call.idem,
        (reply) => {
          reply.expectLength(2);
          return { draining: reply.flag(0), applied: reply.int(1) };
        },
        2,
      ),
  }),

  like: typedScript({
    name: 'tbRankLike',
    file: join(dir, 'like.lua'),
    libraries: writeLibrary,
    numberOfKeys: 'dynamic',
    build: (
      call: WriteCall & {
        item: string;
        userId: string;
        undo: boolean;
        newItems: number;
        newLikes: number;
        /** The like's time (unix ms, not after now); absent: now. */
        atMs?: number;
      },
    ) => ({
      keys: call.shard.allKeys,
      args: [
        ...boardArgs(call),
        call.item,
        call.userId,
        call.undo ? 1 : 0,
        ...idemArgs(call.idem, windowNames(call)),
        call.newItems,
        call.newLikes,
        call.atMs ?? call.nowMs,
      ],
    }),
    /** created: [new items, new likes, due time for the index (ms; 0: none)] */
    decode: (raw, call): Idempotent<StandingsReply & { counted: boolean }> =>
      withStandings(
        decodeIdempotent('tbRankLike', raw, call.idem, (reply) => ({ reply, rest: { counted: reply.flag(1) } }), 3),
        2,
      ),
  }),

  expire: typedScript({
    name: 'tbRankExpire',
    file: join(dir, 'expire.lua'),
    libraries: windowLibrary,
    numberOfKeys: 'dynamic',
    build: (call: BoardCall) => ({ keys: call.shard.allKeys, args: boardArgs(call) }),
    decode: (raw): ExpireReply => {
      const reply = new Reply('tbRankExpire', raw).expectLength(2);
      const nextDueMs = reply.int(1);
      return { draining: reply.flag(0), nextDueMs: nextDueMs === 0 ? null : nextDueMs };
    },
  }),

  dueClaim: typedScript({
    name: 'tbRankDueClaim',
    file: join(dir, 'due_claim.lua'),
    numberOfKeys: 2,
    build: (call: { keys: RankingKeys; nowMs: number; leaseMs: number; most: number; dueByMs: number }) => ({
      keys: [call.keys.dueIndex(), call.keys.dueLeases()],
      args: [call.nowMs, call.leaseMs, call.most, call.dueByMs],
    }),
    decode: (raw): DueClaim => {
      const reply = new Reply('tbRankDueClaim', raw).expectLength(1, true);
      return {
        leaseEndMs: reply.int(0),
        boards: Array.from({ length: reply.length - 1 }, (_, i) => reply.string(1 + i)),
      };
    },
  }),

  dueComplete: typedScript({
    name: 'tbRankDueComplete',
    file: join(dir, 'due_complete.lua'),
    numberOfKeys: 2,
    build: (call: { keys: RankingKeys; leaseEndMs: number; visited: Map<string, number | null> }) => ({
      keys: [call.keys.dueIndex(), call.keys.dueLeases()],
      args: [call.leaseEndMs, ...[...call.visited].flatMap(([board, nextDueMs]) => [board, nextDueMs ?? 0])],
    }),
    /** boards completed */
    decode: (raw) => intReply('tbRankDueComplete', raw),
  }),

  sweepTurn: typedScript({
    name: 'tbRankSweepTurn',
    file: join(dir, 'sweep_turn.lua'),
    numberOfKeys: 1,
    build: (call: { keys: RankingKeys; nowMs: number; intervalMs: number }) => ({
      keys: [call.keys.dueSweep()],
      args: [call.nowMs, call.intervalMs],
    }),
    /** true: this caller sweeps now */
    decode: (raw) => flagReply('tbRankSweepTurn', raw),
  }),

  readTop: listingRead('tbRankReadTop', 'read_top.lua', (call: WindowCall & { offset: number; limit: number }) => [
    call.offset,
    call.limit,
  ]),

  readItem: typedScript({
    name: 'tbRankReadItem',
    file: join(dir, 'read_item.lua'),
    libraries: windowLibrary,
    numberOfKeys: 3,
    build: (call: WindowCall & { item: string }) => windowRead(call, [call.item]),
    decode: (raw) => {
      const reply = new Reply('tbRankReadItem', raw).expectLength(4);
      return {
        draining: reply.flag(0),
        standing: { score: reply.int(1), rank: reply.int(2) || null },
        ranked: reply.int(3),
      };
    },
  }),

  readAround: listingRead(
    'tbRankReadAround',
    'read_around.lua',
    (call: WindowCall & { item: string; radius: number }) => [call.item, call.radius],
  ),

  readNeighbours: typedScript({
    name: 'tbRankReadNeighbours',
    file: join(dir, 'read_neighbours.lua'),
    libraries: windowLibrary,
    numberOfKeys: 3,
    build: (call: WindowCall & { item: string; score: number; radius: number }) =>
      windowRead(call, [call.item, call.score, call.radius]),
    decode: (raw) => {
      const reply = new Reply('tbRankReadNeighbours', raw).expectLength(4, true);
      const rows = rowsOf(reply, 4);
      const beforeCount = reply.int(3);
      return {
        draining: reply.flag(0),
        /** Items of this shard before the place the pair takes. */
        position: reply.int(1),
        above: reply.int(2),
        before: rows.slice(0, beforeCount),
        after: rows.slice(beforeCount),
      };
    },
  }),

  countAbove: typedScript({
    name: 'tbRankCountAbove',
    file: join(dir, 'count_above.lua'),
    libraries: windowLibrary,
    numberOfKeys: 'dynamic',
    build: (call: BoardCall & { windows: WindowConfig[]; scores: number[] }) => {
      const { keys } = call.shard;
      return {
        keys: [keys.cfg(), ...call.windows.flatMap((w) => [keys.slots(w.name), keys.top(w.name)])],
        args: [...boardArgs(call, windowArgsOf(call.windows)), ...call.scores],
      };
    },
    decode: (raw, call) => {
      const reply = new Reply('tbRankCountAbove', raw).expectLength(1 + 2 * call.windows.length);
      return {
        draining: reply.flag(0),
        above: call.windows.map((_, w) => reply.int(1 + 2 * w)),
        ranked: call.windows.map((_, w) => reply.int(2 + 2 * w)),
      };
    },
  }),

  countAboveShards: typedScript({
    name: 'tbRankCountAboveShards',
    file: join(dir, 'count_above_shards.lua'),
    libraries: windowLibrary,
    numberOfKeys: 1,
    build: (call: {
      board: PreparedBoard;
      /** Shards served by one Redis node (at least one). */
      shards: ShardKeys[];
      nowMs: number;
      windows: WindowConfig[];
      scores: number[];
    }) => ({
      keys: [call.shards[0].keys.cfg()],
      args: [
        call.board.config.version,
        call.nowMs,
        call.windows.length,
        ...call.windows.flatMap((w) => [w.name, w.periodSec, w.intervalSec]),
        ...call.scores,
        ...call.shards.map((shard) => shard.keys.cfg()),
      ],
    }),
    decode: (raw, call) => {
      const reply = new Reply('tbRankCountAboveShards', raw).expectLength(1, true);
      const pendingCount = reply.int(0);
      reply.expectLength(1 + pendingCount + 2 * call.windows.length);
      const counts = 1 + pendingCount;
      return {
        /** Shards with expired slots not yet drained: not counted. */
        pending: Array.from({ length: pendingCount }, (_, i) => call.shards[reply.int(1 + i) - 1]),
        above: call.windows.map((_, w) => reply.int(counts + 2 * w)),
        ranked: call.windows.map((_, w) => reply.int(counts + 1 + 2 * w)),
      };
    },
  }),

  readView: typedScript({
    name: 'tbRankReadView',
    file: join(dir, 'read_view.lua'),
    libraries: windowLibrary,
    numberOfKeys: 'dynamic',
    build: (call: ViewCall) => {
      const { keys } = call.shard;
      const { read } = call;
      const readArgs =
        read.op === 'top'
          ? [read.offset, read.limit]
          : read.op === 'item'
            ? [read.item]
            : read.op === 'around'
              ? [read.item, read.radius]
              : [read.rankScore];
      return {
        keys: [keys.cfg(), ...call.windows.flatMap((w) => [keys.slots(w.name), keys.top(w.name)])],
        args: [...boardArgs(call, windowArgsOf(call.windows)), call.view.name, read.op, ...readArgs],
      };
    },
    decode: (raw, call): ViewReply => {
      const reply = new Reply('tbRankReadView', raw).expectLength(4, true);
      const width = call.view.mode === 'rising' ? 7 : 2;
      if ((reply.length - 4) % width !== 0) throw reply.unexpected(reply.length - 1, `rows of ${width} entries`);
      const rows: ViewRow[] = [];
      for (let i = 4; i < reply.length; i += width) {
        const row: ViewRow = { item: reply.string(i), score: reply.number(i + 1) };
        if (width === 7)
          row.rising = {
            observed: reply.number(i + 2),
            baseline: reply.number(i + 3),
            sinceSec: reply.number(i + 4),
            currentSlot: reply.number(i + 5),
            previousSlot: reply.number(i + 6),
          };
        rows.push(row);
      }
      return { draining: reply.flag(0), landmarkSec: reply.int(1), a: reply.int(2), b: reply.int(3), rows };
    },
  }),

  boardPut: typedScript({
    name: 'tbRankBoardPut',
    file: join(dir, 'board_put.lua'),
    libraries: windowLibrary,
    numberOfKeys: 1,
    build: (call: {
      keys: BoardKeys;
      windows: WindowSpec[];
      /** undefined keeps the stored count (1 for a new board) */
      shards: number | undefined;
      /** undefined keeps the stored cap (none for a new board) */
      maxItems: number | undefined;
      views: ViewConfig[];
      reset: boolean;
      version: string;
      nowMs: number;
    }) => ({
      keys: [call.keys.cfg()],
      args: [
        JSON.stringify(call.windows),
        call.shards ?? '',
        call.version,
        call.reset ? 1 : 0,
        call.nowMs,
        call.maxItems ?? '',
        JSON.stringify(call.views),
      ],
    }),
    decode: (raw): BoardPutReply => {
      const reply = new Reply('tbRankBoardPut', raw);
      const status = oneOfReply('tbRankBoardPut', reply.string(0), ['created', 'updated', 'unchanged', 'conflict']);
      if (status === 'conflict') return { status, message: reply.expectLength(2).string(1) };
      reply.expectLength(8);
      return {
        status,
        version: reply.string(1),
        windowsJson: reply.string(2),
        shards: reply.number(3),
        revision: reply.int(4),
        mostShards: reply.number(5),
        maxItems: reply.int(6) || null,
        viewsJson: reply.string(7),
      };
    },
  }),

  requestClaim: typedScript({
    name: 'tbRankRequestClaim',
    file: join(dir, 'request_claim.lua'),
    libraries: WRITE_LIBRARIES,
    numberOfKeys: 1,
    build: (call: LedgerCall) => ({
      keys: [call.ledger.keys.cfg()],
      args: [call.nowMs, ...idemArgs(call.idem, 'pending')],
    }),
    decode: (raw, call): LedgerEntry => {
      const entry = decodeIdempotent('tbRankRequestClaim', raw, call.idem, (reply) =>
        reply.length > 0 ? reply.string(0) : undefined,
      );
      if (entry.context === 'done' && entry.value !== undefined) return { state: 'answered', body: entry.value };
      return { state: entry.replayed ? 'pending' : 'claimed' };
    },
  }),

  requestComplete: typedScript({
    name: 'tbRankRequestComplete',
    file: join(dir, 'request_complete.lua'),
    libraries: WRITE_LIBRARIES,
    numberOfKeys: 1,
    build: (call: LedgerCall & { body: string }) => ({
      keys: [call.ledger.keys.cfg()],
      args: [call.nowMs, ...idemArgs(call.idem, 'done'), call.body],
    }),
    decode: (raw, call) => {
      decodeIdempotent('tbRankRequestComplete', raw, call.idem, (reply) => reply.string(0));
    },
  }),

  boardDelete: typedScript({
    name: 'tbRankBoardDelete',
    file: join(dir, 'board_delete.lua'),
    libraries: writeLibrary,
    numberOfKeys: 2,
    build: (call: { keys: BoardKeys; nowMs: number; idemRetentionMs: number }) => ({
      keys: [call.keys.cfg(), call.keys.likes()],
      args: [call.nowMs, call.idemRetentionMs, RESEND_GUARD_MS],
    }),
    /** true when the shard existed */
    decode: (raw) => intReply('tbRankBoardDelete', raw) === 1,
  }),

  historyRead: typedScript({
    name: 'tbRankHistoryRead',
    file: join(dir, 'history_read.lua'),
    libraries: windowLibrary,
    numberOfKeys: 3,
    build: (call: WindowCall & { atSec: number | undefined }) => windowRead(call, [call.atSec ?? '']),
    /** keeps: the window keeps snapshots; snapshot: the one found (undefined: none) */
    decode: (raw): { keeps: boolean; snapshot?: StoredSnapshot } => {
      const reply = new Reply('tbRankHistoryRead', raw).expectLength(1, true);
      if (reply.length === 1) return { keeps: reply.flag(0) };
      reply.expectLength(3);
      return { keeps: true, snapshot: { atSec: reply.int(1), rows: parseSnapshotRows(reply.string(2)) } };
    },
  }),

  historyItem: typedScript({
    name: 'tbRankHistoryItem',
    file: join(dir, 'history_item.lua'),
    libraries: windowLibrary,
    numberOfKeys: 3,
    build: (call: WindowCall & { item: string; fromSec: number; toSec: number; mostSnapshots: number }) =>
      windowRead(call, [call.item, call.fromSec, call.toSec, call.mostSnapshots]),
    /** nextSec: the boundary the next page starts at (null: the range is answered) */
    decode: (raw): { keeps: boolean; nextSec: number | null; points: SnapshotPoint[] } => {
      const reply = new Reply('tbRankHistoryItem', raw).expectLength(2, true);
      if ((reply.length - 2) % 3 !== 0) throw reply.unexpected(reply.length - 1, 'triples of boundary, score, above');
      return {
        keeps: reply.flag(0),
        nextSec: reply.int(1) || null,
        points: Array.from({ length: (reply.length - 2) / 3 }, (_, i) => ({
          atSec: reply.int(2 + 3 * i),
          score: reply.number(3 + 3 * i),
          above: reply.int(4 + 3 * i),
        })),
      };
    },
  }),

  historyCount: typedScript({
    name: 'tbRankHistoryCount',
    file: join(dir, 'history_count.lua'),
    libraries: windowLibrary,
    numberOfKeys: 3,
    build: (call: WindowCall & { points: Array<{ atSec: number; score: number }> }) =>
      windowRead(
        call,
        call.points.flatMap((point) => [point.atSec, point.score]),
      ),
    /** rows above each point's score in this shard's snapshot at or before its time */
    decode: (raw, call) => {
      const reply = new Reply('tbRankHistoryCount', raw).expectLength(call.points.length);
      return call.points.map((_, i) => reply.int(i));
    },
  }),

  shardSync: typedScript({
    name: 'tbRankShardSync',
    file: join(dir, 'shard_sync.lua'),
    libraries: windowLibrary,
    numberOfKeys: 1,
    build: (call: {
      keys: BoardKeys;
      version: string;
      windowsJson: string;
      shards: number;
      revision: number;
      maxItems: number | null;
      viewsJson: string;
      nowMs: number;
    }) => ({
      keys: [call.keys.cfg()],
      args: [
        call.version,
        call.windowsJson,
        call.shards,
        call.revision,
        call.nowMs,
        call.maxItems ?? 0,
        call.viewsJson,
      ],
    }),
    decode: (raw) => oneOfReply('tbRankShardSync', raw, ['synced', 'unchanged']),
  }),
};
