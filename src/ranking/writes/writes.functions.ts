import { functionSet, typedFunction } from '../../redis/function-library';
import { namedFunction } from '../../redis/named-function';
import { bareHeader, callArgs } from '../../redis/function-args';
import { decodeIdempotent, IdemCall, IDEM_FIELDS, idemNamedArgs, Idempotent } from '../../redis/idempotency';
import { blockKeyOf } from '../../common/names';
import { ShardKeys } from '../core/board';
import type { BatchEntry, StandingsReply } from '../core/ranking.types';
import { STANDING_FIELDS, withNamedStandings } from '../core/standings';
import { boardHeader, BoardCall, WriteCall } from '../core/script-call';
import { sliceFunctions } from '../core/slice-functions';
import { SEGMENTS_PER_EVENT } from '../options/segments/segments.limits';
import {
  batchEntryArgs,
  CoalescedAnswer,
  CoalescedIncrement,
  incrementAnswers,
  incrementCall,
  INCREMENT_ARGS,
  INCREMENT_REPLY,
  IncrementWritten,
  WRITE_CREATED,
} from './write-records';

/** increment.lua's contract: its requests follow as records; it reads its windows through window_lib. */
const INCREMENT_CONTRACT = {
  args: INCREMENT_ARGS,
  reply: INCREMENT_REPLY,
  created: WRITE_CREATED,
  rest: true,
  rawWindows: true,
};

export type { CoalescedIncrement, IncrementAllowances } from './write-records';
export { WRITE_RECORDS } from './write-records';

const LEDGER_ARGS = [...IDEM_FIELDS, 'body'] as const;
const LEDGER_REPLY = ['body'] as const;
const BATCH_ARGS = [
  ...IDEM_FIELDS,
  'new_items',
  'new_actor_entries',
  'new_segment_entries',
  'segments_max',
  'shape',
] as const;
const BATCH_REPLY = ['draining', 'applied'] as const;
const LIKE_ARGS = [
  'item',
  'user',
  'undo',
  ...IDEM_FIELDS,
  'new_items',
  'new_likes',
  'at_ms',
  'segments',
  'segments_max',
  'block_key',
  'take_back_segments',
  'resume',
] as const;
const LIKE_LEAD = ['draining', 'counted'] as const;
const LIKE_REPLY = [...LIKE_LEAD, ...STANDING_FIELDS] as const;
/**
 * What a like or an unlike created: new items, new likes, the due time for the index (unix ms; 0:
 * none), and the segments a take-back left for the next calls (0: none; a replay says 0 whatever is left).
 */
const LIKE_CREATED = ['items', 'likes', 'due_ms', 'take_back_left'] as const;

/** A retry-safe request on a sharded board and the shard its ledger entry lives on (see request_claim.lua). */
export interface LedgerCall {
  ledger: ShardKeys;
  nowMs: number;
  idem: IdemCall;
}

/** What the ledger knows of a request: new, claimed before but not answered, or answered (its body). */
export type LedgerEntry = { state: 'claimed' | 'pending' } | { state: 'answered'; body: string };

/** The writes: increments (one, coalesced, a batch), likes, and the ledger of keyed requests on sharded boards. */
export const WRITES_FUNCTIONS = functionSet('tbRank', {
  /** One item increment (increment.lua with one request); a refusal of the request is thrown. */
  increment: typedFunction({
    numberOfKeys: 'dynamic',
    contract: INCREMENT_CONTRACT,
    build: (call: WriteCall & Omit<CoalescedIncrement, 'idem'>) =>
      incrementCall(call, [
        {
          item: call.item,
          amount: call.amount,
          idem: call.idem,
          newItems: call.newItems,
          newActorEntries: call.newActorEntries,
          newSegmentEntries: call.newSegmentEntries,
          atMs: call.atMs,
          createdMs: call.createdMs,
          segments: call.segments,
          actor: call.actor,
          group: call.group,
        },
      ]),
    decode: (raw, call): IncrementWritten => {
      const [answer] = incrementAnswers('tbRankIncrement', raw, call, [call]);
      if (answer instanceof Error) throw answer;
      return answer;
    },
  }),

  /** Item increments that arrived together for one shard (WRITE_COALESCE_MS), applied in order by one call. */
  increments: typedFunction({
    handler: 'increment',
    numberOfKeys: 'dynamic',
    contract: INCREMENT_CONTRACT,
    build: (call: BoardCall & { requests: CoalescedIncrement[] }) => incrementCall(call, call.requests),
    /** Each request's answer as `increment` decodes it, its refusal, or NotApplied (left to the next call). */
    decode: (raw, call): CoalescedAnswer[] => incrementAnswers('tbRankIncrements', raw, call, call.requests),
  }),

  incrementBatch: typedFunction({
    numberOfKeys: 'dynamic',
    sendAlone: true,
    contract: { args: BATCH_ARGS, reply: BATCH_REPLY, created: WRITE_CREATED, rest: true },
    build: (
      call: WriteCall & {
        entries: BatchEntry[];
        newItems: number;
        /** New actor contributions and segment entries the part may create (absent or -1: no quota). */
        newActorEntries?: number;
        newSegmentEntries?: number;
      },
    ) => {
      const { shape, records } = batchEntryArgs(call.entries, call.nowMs);
      const args = callArgs(boardHeader(call), BATCH_ARGS, {
        ...idemNamedArgs(call.idem, ''),
        new_items: call.newItems,
        new_actor_entries: call.newActorEntries ?? -1,
        new_segment_entries: call.newSegmentEntries ?? -1,
        segments_max: call.board.config.segmentsMax ?? 0,
        shape,
      });
      return { keys: call.shard.incrementKeys, args: [...args, ...records] };
    },
    decode: (raw, call) =>
      decodeIdempotent(
        'tbRankIncrementBatch',
        raw,
        call.idem,
        (reply) => {
          const answer = reply.named(BATCH_REPLY);
          return { draining: answer.flag('draining'), applied: answer.int('applied') };
        },
        WRITE_CREATED,
      ),
  }),

  like: typedFunction({
    numberOfKeys: 'dynamic',
    contract: { args: LIKE_ARGS, reply: LIKE_REPLY, created: LIKE_CREATED },
    build: (
      call: WriteCall & {
        item: string;
        userId: string;
        undo: boolean;
        newItems: number;
        newLikes: number;
        /** The like's time (unix ms, not after now); absent: now. */
        atMs?: number;
        /** The like's segments (absent: none). */
        segments?: string[];
        /** Most live segments on the shard, when not the board's segments.max (0: no new one). */
        segmentsMax?: number;
        /** Most segments an unlike takes the like out of in this call (the rest: the next calls); absent: all. */
        takeBackSegments?: number;
        /** With undo: only go on with a take-back left unfinished, never take back a held like. */
        resume?: boolean;
      },
    ) => ({
      keys: call.shard.allKeys,
      args: callArgs(boardHeader(call), LIKE_ARGS, {
        item: call.item,
        user: call.userId,
        undo: call.undo ? 1 : 0,
        ...idemNamedArgs(call.idem, call.board.windowNames),
        new_items: call.newItems,
        new_likes: call.newLikes,
        at_ms: call.atMs ?? call.nowMs,
        segments: call.segments?.join(',') ?? '',
        segments_max: call.segmentsMax ?? call.board.config.segmentsMax ?? 0,
        block_key: blockKeyOf(call.userId),
        take_back_segments: call.takeBackSegments ?? SEGMENTS_PER_EVENT.max,
        resume: call.resume ? 1 : 0,
      }),
    }),
    decode: (raw, call): Idempotent<StandingsReply & { counted: boolean }, (typeof LIKE_CREATED)[number]> =>
      withNamedStandings(
        decodeIdempotent('tbRankLike', raw, call.idem, (reply) => reply, LIKE_CREATED),
        LIKE_LEAD,
        (reply) => ({
          counted: reply.flag('counted'),
        }),
      ),
  }),

  /** Claims segment names board-wide on shard 0 of a sharded board: see segment_claim.lua. */
  segmentClaim: namedFunction({
    numberOfKeys: 1,
    args: ['max', 'until_sec', 'names'],
    reply: ['claimed'],
    build: (call: { shard0: ShardKeys; nowSec: number; max: number; untilSec: number; names: string[] }) => ({
      keys: [call.shard0.keys.cfg()],
      header: bareHeader(call.nowSec * 1000),
      args: {
        max: call.max,
        until_sec: call.untilSec,
        names: JSON.stringify(call.names),
      },
    }),
    decode: (reply) => reply.int('claimed'),
  }),

  requestClaim: typedFunction({
    numberOfKeys: 1,
    contract: { args: LEDGER_ARGS, reply: LEDGER_REPLY },
    build: (call: LedgerCall) => ({
      keys: [call.ledger.keys.cfg()],
      args: callArgs(bareHeader(call.nowMs), LEDGER_ARGS, ledgerArgs(call, 'pending', '')),
    }),
    decode: (raw, call): LedgerEntry => {
      // An entry claimed by a library from before the named contract replays no body.
      const entry = decodeIdempotent('tbRankRequestClaim', raw, call.idem, (reply) =>
        reply.length === 0 ? '' : reply.expectLength(LEDGER_REPLY.length).string(LEDGER_REPLY.indexOf('body')),
      );
      if (entry.context === 'done') return { state: 'answered', body: entry.value };
      return { state: entry.replayed ? 'pending' : 'claimed' };
    },
  }),

  requestComplete: typedFunction({
    numberOfKeys: 1,
    contract: { args: LEDGER_ARGS, reply: LEDGER_REPLY },
    build: (call: LedgerCall & { body: string }) => ({
      keys: [call.ledger.keys.cfg()],
      args: callArgs(bareHeader(call.nowMs), LEDGER_ARGS, ledgerArgs(call, 'done', call.body)),
    }),
    decode: (raw, call) => {
      decodeIdempotent('tbRankRequestComplete', raw, call.idem, (reply) =>
        reply.expectLength(LEDGER_REPLY.length).string(LEDGER_REPLY.indexOf('body')),
      );
    },
  }),
});

/** A ledger call's arguments by name: its idempotency fields, with `context`, and the answer's body. */
function ledgerArgs(call: LedgerCall, context: 'pending' | 'done', body: string) {
  return { ...idemNamedArgs(call.idem, context), body };
}

/** The writes slice's part of tb_ranking, injected into its store (RankingCoreModule builds it). */
export class WritesFunctions extends sliceFunctions(WRITES_FUNCTIONS) {}
