import {
  COUNT_SHARD_WEIGHT,
  LOOKUP_COUNTS_PER_CALL,
  LOOKUP_IDS_PER_CALL,
  LOOKUP_NODE_UNITS_PER_CALL,
} from '../core/ranking.limits';
import { optionsCountWeight } from '../options/registry';
import type { AheadOf, LookupNodeReply } from './lookup.functions';

type NodeAnswer = NonNullable<LookupNodeReply>;

/** What a lookup_node call's weight reads of a board: its options (a count's weight) and its shards. */
export interface CountedBoard {
  config: Parameters<typeof optionsCountWeight>[0];
  shards: readonly unknown[];
}

/**
 * One lookup_node call of a chunk's ids: `ids` their positions in the chunk, `counted` the positions
 * of the shards it counts on; with `given`, each id counted ahead of that standing (score, mark), its
 * own shard not read (a re-count), else ahead of the standing its own shard shows.
 */
export interface PartCall {
  ids: number[];
  counted: number[];
  withData: boolean;
  given?: AheadOf;
}

/**
 * Ids one lookup_node call takes: LOOKUP_IDS_PER_CALL, fewer when their board ranks' counts over
 * every shard pass LOOKUP_COUNTS_PER_CALL with every shard's own reads (its config and slot check,
 * COUNT_SHARD_WEIGHT each), which each call pays (a plain 64-shard board: 3 ids, 448 units, calls of
 * at most ~7 M instructions, bench/lookup-instructions.ts).
 */
export function nodeIdsPerCall(board: CountedBoard, boardRanks: boolean): number {
  if (!boardRanks) return LOOKUP_IDS_PER_CALL;
  // A count weighs what the board's options make it (a strict order's counts also order tie marks).
  const countsPerId = board.shards.length * optionsCountWeight(board.config);
  const shardReads = board.shards.length * COUNT_SHARD_WEIGHT;
  const ids = Math.floor((LOOKUP_COUNTS_PER_CALL - shardReads) / countsPerId);
  return Math.max(1, Math.min(LOOKUP_IDS_PER_CALL, ids));
}

/**
 * The parts of the shards each lookup_node call counts on: every shard, or when a call takes a single
 * id (its counts alone fill LOOKUP_COUNTS_PER_CALL: a `ties: first` count weighs 3), countedParts.
 */
export function nodeParts(board: CountedBoard, boardRanks: boolean, ids: number): number[][] {
  return boardRanks && ids === 1 ? countedParts(board, ids) : [board.shards.map((_, s) => s)];
}

/**
 * The parts of a board's shards (their positions) a lookup_node call of `ids` ids counts on, each
 * weighing at most LOOKUP_NODE_UNITS_PER_CALL (the ids' counts on a shard and its own reads, a shard
 * at least), of even sizes; one part of every shard when they fit.
 */
export function countedParts(board: CountedBoard, ids: number): number[][] {
  const perPart = shardsPerCountCall(board.config, ids);
  const positions = board.shards.map((_, s) => s);
  const size = Math.ceil(positions.length / Math.ceil(positions.length / perPart));
  return Array.from({ length: Math.ceil(positions.length / size) }, (_, c) =>
    positions.slice(c * size, (c + 1) * size),
  );
}

/**
 * A chunk's lookup_node answer from a call per part of the shards (`parts`, sent together, data read
 * by the first one's only), each reading the ids' standings itself: an id's rank is 1 + the items
 * ahead that each part counted. Its standing (score, tie mark, listed or hidden) is the one the part
 * counting its own shard (`homes`) read, in the same call as that shard's items ahead of it. A part
 * whose call read another standing of an id (a write moved it between the calls) counts that id
 * again, once, ahead of the home part's standing given (its own shard is not in that part): at most
 * twice as many calls as parts, none weighing more than its part. Each part counts its shards as they
 * are when it runs, as the two rounds' calls do. Null when a call found expired slots to drain.
 */
export async function lookupInParts(
  homes: number[],
  parts: number[][],
  withData: boolean,
  call: (part: PartCall) => Promise<LookupNodeReply>,
): Promise<LookupNodeReply> {
  const all = homes.map((_, i) => i);
  const replies = await Promise.all(
    parts.map((counted, p) => call({ ids: all, counted, withData: withData && p === 0 })),
  );
  const answered = replies.filter((reply) => reply !== null);
  if (answered.length < replies.length) return null;
  if (parts.length === 1) return answered[0];
  const home = homes.map((shard) => answered[parts.findIndex((part) => part.includes(shard))]);
  const recounts = answered.map((reply) => all.filter((i) => home[i].ranks[i] > 0 && !sameStanding(home[i], reply, i)));
  const given = (ids: number[]) => ({
    scores: ids.map((i) => home[i].scores[i]),
    marks: ids.map((i) => home[i].marks[i]),
  });
  const again = await Promise.all(
    recounts.map((ids, p) =>
      ids.length === 0 ? undefined : call({ ids, counted: parts[p], withData: false, given: given(ids) }),
    ),
  );
  if (again.some((reply) => reply === null)) return null;
  // Items ahead of the id at position i that part p counted, once its standing agreed.
  const ahead = (p: number, i: number) => {
    const k = recounts[p].indexOf(i);
    return (k < 0 ? answered[p].ranks[i] : (again[p] as NodeAnswer).ranks[k]) - 1;
  };
  return {
    scores: all.map((i) => home[i].scores[i]),
    marks: all.map((i) => home[i].marks[i]),
    data: answered[0].data,
    ranks: all.map((i) =>
      home[i].ranks[i] > 0 ? 1 + parts.reduce((sum, _, p) => sum + ahead(p, i), 0) : home[i].ranks[i],
    ),
  };
}

/** Whether two lookup_node answers read the same standing of the id at position i. */
function sameStanding(one: NodeAnswer, other: NodeAnswer, i: number): boolean {
  return (
    one.scores[i] === other.scores[i] &&
    one.marks[i] === other.marks[i] &&
    Math.sign(one.ranks[i]) === Math.sign(other.ranks[i])
  );
}

/**
 * Shards one lookup_count_shards call counts `scores` scores on: at most LOOKUP_NODE_UNITS_PER_CALL
 * weighted units, as a lookup_node call's (a count weighing what the board's options make it, a shard's
 * own reads COUNT_SHARD_WEIGHT): a count is one command at most, a `ties: first` count reads its
 * score's run of the order too (31 scores on 5 shards of such a board, 500 counts, ran 305 commands).
 */
export function shardsPerCountCall(config: Parameters<typeof optionsCountWeight>[0], scores: number): number {
  const perShard = Math.max(1, scores) * optionsCountWeight(config) + COUNT_SHARD_WEIGHT;
  return Math.max(1, Math.floor(LOOKUP_NODE_UNITS_PER_CALL / perShard));
}

/**
 * Scores one count call takes at most: those whose counts and one shard's reads weigh at most
 * LOOKUP_NODE_UNITS_PER_CALL (65 on `ties: first`), more a call counting on a lone shard would pass.
 */
export function scoresPerCountCall(config: Parameters<typeof optionsCountWeight>[0]): number {
  return Math.max(1, Math.floor((LOOKUP_NODE_UNITS_PER_CALL - COUNT_SHARD_WEIGHT) / optionsCountWeight(config)));
}
