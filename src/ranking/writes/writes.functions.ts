import { NamedReply, Reply } from '../../redis/replies';
import { bareHeader, callArgs } from '../../redis/function-args';
import {
  decodeIdempotent,
  decodeIdempotentReply,
  IdemCall,
  IdempotencyKeyReusedError,
  IdempotentAnswerUnfundedError,
  idemArgs,
  IDEM_FIELDS,
  idemNamedArgs,
  Idempotent,
  retentionArg,
} from '../../redis/idempotency';
import { blockKeyOf } from '../../common/names';
import { growthRefusalOf } from '../../redis/refusals';
import { typedFunction } from '../../redis/function-library';
import { ScriptCall } from '../../redis/scripts';
import { ShardKeys } from '../core/board';
import type { BatchEntry, StandingsReply } from '../core/ranking.types';
import { standingsOf, withStandings } from '../core/standings';
import { actorArg } from '../core/actor-rules';
import { retractedOf, segmentLimitOf } from '../core/ranking.errors';
import { BoardCall, boardArgs, WriteCall } from '../core/script-call';
import { sliceFunctions } from '../core/slice-functions';
import { scoreArg } from '../scores/scores.functions';

const CLAIM_ARGS = ['max', 'until_sec', 'names'] as const;
const CLAIM_REPLY = ['claimed'] as const;
const LEDGER_ARGS = [...IDEM_FIELDS, 'body'] as const;
const LEDGER_REPLY = ['body'] as const;

/** A retry-safe request on a sharded board and the shard its ledger entry lives on (see request_claim.lua). */
export interface LedgerCall {
  ledger: ShardKeys;
  nowMs: number;
  idem: IdemCall;
}

/** What the ledger knows of a request: new, claimed before but not answered, or answered (its body). */
export type LedgerEntry = { state: 'claimed' | 'pending' } | { state: 'answered'; body: string };

/** What one increment may create (-1: no quota): new items, actor contributions, segment entries. */
export interface IncrementAllowances {
  newItems: number;
  newActorEntries?: number;
  newSegmentEntries?: number;
}

/** One item increment of a call: its own key (none: undefined), growth allowances and event time. */
export interface CoalescedIncrement extends IncrementAllowances {
  item: string;
  amount: number;
  idem?: IdemCall;
  /** The event's time (unix ms, not after now; absent: now). */
  atMs?: number;
  /** The item's creation time (unix ms; absent: none), for a hot view's firstSeen. */
  createdMs?: number;
  /** The segments the event also counts in (absent: none). */
  segments?: string[];
  /** Who sent it (absent: no one). */
  actor?: string;
  /** The item's group from now on (absent: unchanged). */
  group?: string;
}

/** What one request of an increment call got: its own answer, or what refused it (TB_AT_OUT_OF_SPAN, growth, a reused key). */
export type CoalescedAnswer = Idempotent<StandingsReply> | Error;

/** What an increment answers for one request: { outcome, context, [created...], draining, standings... }. */
function incrementAnswer(answer: Reply, idem: IdemCall | undefined): CoalescedAnswer {
  // One request's reused key or refused growth refuses that request only.
  if (answer.int(0) === 2) return new IdempotencyKeyReusedError();
  if (answer.int(0) === 3) return new IdempotentAnswerUnfundedError();
  // The refusal as a script error would carry it: the store turns it into its domain error.
  if (answer.int(0) === -1) {
    const refusal = new Error(answer.string(1));
    return growthRefusalOf(refusal) ?? segmentLimitOf(refusal) ?? retractedOf(refusal) ?? refusal;
  }
  return withStandings(
    decodeIdempotentReply(answer, idem, (reply) => ({ reply, rest: {} }), 4),
    1,
  );
}

/**
 * increment.lua's flat reply: the call's draining flag, then one record per request, in order: -1 and a
 * plain request's created count and standings (score_w, rank_w), or the length of a general answer and
 * that answer (incrementAnswer). A plain record answers what its general answer would: outcome 0, the
 * call's context, no due time, no previous ranks.
 */
function incrementAnswers(
  script: string,
  raw: unknown,
  call: BoardCall,
  requests: CoalescedIncrement[],
): CoalescedAnswer[] {
  const reply = new Reply(script, raw).expectLength(1, true);
  const draining = reply.flag(0);
  const windowCount = call.board.config.windows.length;
  const answers: CoalescedAnswer[] = [];
  let at = 1;
  for (const request of requests) {
    const tag = reply.int(at);
    if (tag === -1) {
      const record = reply.range(at + 1, 1 + 2 * windowCount);
      answers.push({
        replayed: false,
        context: call.board.windowNames,
        value: { draining, standings: standingsOf(record, 1, windowCount), marks: undefined },
        created: [record.int(0), 0, 0, 0],
      });
      at += 2 + 2 * windowCount;
    } else {
      answers.push(incrementAnswer(reply.range(at + 1, tag).expectLength(2, true), request.idem));
      at += 1 + tag;
    }
  }
  reply.expectLength(at);
  return answers;
}

/** increment.lua's keys and arguments for the given requests, applied in this order. */
function incrementCall(call: BoardCall, requests: CoalescedIncrement[]): ScriptCall {
  return {
    keys: call.shard.incrementKeys,
    args: [
      ...boardArgs(call),
      // The window names a write's answer is keyed by: stored with a retry-safe write, so a replay rebuilds it as it was.
      call.board.windowNames,
      call.board.config.segmentsMax ?? 0,
      ...requestArgs(requests, call.nowMs, call.board.config.views.length === 0),
    ],
  };
}

/**
 * increment.lua's request stride and requests: when no request of the call has a key and each is a plain
 * entry (under load, most calls), two arguments each (item, amount) after the allowance they share, or
 * three (item, amount, allowance) when their allowances differ; else twelve (thirteen, the group last, when
 * some request names a group). On a board
 * without views (`secondIsNow`) an event in the call's second counts as at now: the call's requests
 * arrived within one second (the coalescer groups them by second), each lands in the slots of its
 * second either way, and only a view reads an event's time finer than its second (a hot view's first
 * sighting), so their milliseconds need not travel.
 */
function requestArgs(requests: CoalescedIncrement[], nowMs: number, secondIsNow: boolean): Array<string | number> {
  const plain = requests.every((request) => request.idem === undefined && isPlainEntry(request, nowMs, secondIsNow));
  const shared = requests[0]?.newItems;
  if (plain && shared !== undefined && requests.every((request) => request.newItems === shared)) {
    const args: Array<string | number> = [2, shared];
    for (const request of requests) args.push(request.item, request.amount);
    return args;
  }
  const grouped = requests.some((request) => request.group !== undefined);
  const args: Array<string | number> = [plain ? 3 : grouped ? 13 : 12];
  for (const request of requests) {
    if (plain) args.push(request.item, request.amount, request.newItems);
    else {
      args.push(
        request.item,
        request.amount,
        request.idem?.key ?? '',
        request.idem?.fingerprint ?? '',
        request.idem ? retentionArg(request.idem) : 0,
        request.newItems,
        request.atMs ?? nowMs,
        request.createdMs ?? '',
        request.segments?.join(',') ?? '',
        actorArg(request.actor),
        request.newActorEntries ?? -1,
        request.newSegmentEntries ?? -1,
      );
      if (grouped) args.push(request.group ?? '');
    }
  }
  return args;
}

/**
 * An entry that is an item and an amount only: at now (or in now's second, when `secondIsNow`), with no
 * creation time, segments or actor.
 */
function isPlainEntry(entry: Omit<BatchEntry, 'amount'>, nowMs: number, secondIsNow = false): boolean {
  const { atMs = nowMs, createdMs, segments, actor, group } = entry;
  const atNow = atMs === nowMs || (secondIsNow && Math.floor(atMs / 1000) === Math.floor(nowMs / 1000));
  return atNow && createdMs === undefined && !segments?.length && !actor && group === undefined;
}

/**
 * increment_batch.lua's entry stride and entries: pairs (item, amount) when every entry is plain (most
 * batches: a third of the arguments for ioredis to write and Redis to turn into Lua strings), else
 * septuples (the group last) when some entry names a group, else
 * sextuples. One array, no array per entry.
 */
function batchEntryArgs(entries: BatchEntry[], nowMs: number): Array<string | number> {
  const plain = entries.every((entry) => isPlainEntry(entry, nowMs));
  const grouped = entries.some((entry) => entry.group !== undefined);
  const args: Array<string | number> = [plain ? 2 : grouped ? 7 : 6];
  for (const entry of entries) {
    const value = entry.tiebreak === undefined ? entry.amount : scoreArg(entry.amount, entry.tiebreak);
    if (plain) args.push(entry.item, value);
    else {
      args.push(
        entry.item,
        value,
        entry.atMs ?? nowMs,
        entry.createdMs ?? '',
        entry.segments?.join(',') ?? '',
        actorArg(entry.actor),
      );
      if (grouped) args.push(entry.group ?? '');
    }
  }
  return args;
}

/** The writes: increments (one, coalesced, a batch), likes, and the ledger of keyed requests on sharded boards. */
export const WRITES_FUNCTIONS = {
  /** One item increment (increment.lua with one request); a refusal of the request is thrown. */
  increment: typedFunction({
    name: 'tbRankIncrement',
    handler: 'increment',
    numberOfKeys: 'dynamic',
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
    /** created: [new items, due time for the index (ms; 0: none), new actor contributions, new segment entries] */
    decode: (raw, call): Idempotent<StandingsReply> => {
      const [answer] = incrementAnswers('tbRankIncrement', raw, call, [call]);
      if (answer instanceof Error) throw answer;
      return answer;
    },
  }),

  /** Item increments that arrived together for one shard (WRITE_COALESCE_MS), applied in order by one call. */
  increments: typedFunction({
    name: 'tbRankIncrements',
    handler: 'increment',
    numberOfKeys: 'dynamic',
    build: (call: BoardCall & { requests: CoalescedIncrement[] }) => incrementCall(call, call.requests),
    /** Each request's answer as `increment` decodes it, or its refusal. */
    decode: (raw, call): CoalescedAnswer[] => incrementAnswers('tbRankIncrements', raw, call, call.requests),
  }),

  incrementBatch: typedFunction({
    name: 'tbRankIncrementBatch',
    handler: 'increment_batch',
    numberOfKeys: 'dynamic',
    sendAlone: true,
    build: (
      call: WriteCall & {
        entries: BatchEntry[];
        newItems: number;
        /** New actor contributions and segment entries the part may create (absent or -1: no quota). */
        newActorEntries?: number;
        newSegmentEntries?: number;
      },
    ) => ({
      keys: call.shard.incrementKeys,
      args: [
        ...boardArgs(call),
        ...idemArgs(call.idem, ''),
        call.newItems,
        call.newActorEntries ?? -1,
        call.newSegmentEntries ?? -1,
        call.board.config.segmentsMax ?? 0,
        ...batchEntryArgs(call.entries, call.nowMs),
      ],
    }),
    /** created: [new items, due time for the index (ms; 0: none), new actor contributions, new segment entries] */
    decode: (raw, call) =>
      decodeIdempotent(
        'tbRankIncrementBatch',
        raw,
        call.idem,
        (reply) => {
          reply.expectLength(2);
          return { draining: reply.flag(0), applied: reply.int(1) };
        },
        4,
      ),
  }),

  like: typedFunction({
    name: 'tbRankLike',
    handler: 'like',
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
        /** The like's segments (absent: none). */
        segments?: string[];
        /** Most live segments on the shard, when not the board's segments.max (0: no new one). */
        segmentsMax?: number;
      },
    ) => ({
      keys: call.shard.allKeys,
      args: [
        ...boardArgs(call),
        call.item,
        call.userId,
        call.undo ? 1 : 0,
        ...idemArgs(call.idem, call.board.windowNames),
        call.newItems,
        call.newLikes,
        call.atMs ?? call.nowMs,
        call.segments?.join(',') ?? '',
        call.segmentsMax ?? call.board.config.segmentsMax ?? 0,
        blockKeyOf(call.userId),
      ],
    }),
    /** created: [new items, new likes, due time for the index (ms; 0: none)] */
    decode: (raw, call): Idempotent<StandingsReply & { counted: boolean }> =>
      withStandings(
        decodeIdempotent('tbRankLike', raw, call.idem, (reply) => ({ reply, rest: { counted: reply.flag(1) } }), 3),
        2,
      ),
  }),

  /** Claims segment names board-wide on shard 0 of a sharded board: see segment_claim.lua. */
  segmentClaim: typedFunction({
    name: 'tbRankSegmentClaim',
    handler: 'segment_claim',
    numberOfKeys: 1,
    contract: { args: CLAIM_ARGS, reply: CLAIM_REPLY },
    build: (call: { shard0: ShardKeys; nowSec: number; max: number; untilSec: number; names: string[] }) => ({
      keys: [call.shard0.keys.cfg()],
      args: callArgs(bareHeader(call.nowSec * 1000), CLAIM_ARGS, {
        max: call.max,
        until_sec: call.untilSec,
        names: JSON.stringify(call.names),
      }),
    }),
    decode: (raw) => new NamedReply('tbRankSegmentClaim', CLAIM_REPLY, raw).int('claimed'),
  }),

  requestClaim: typedFunction({
    name: 'tbRankRequestClaim',
    handler: 'request_claim',
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
    name: 'tbRankRequestComplete',
    handler: 'request_complete',
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
};

/** A ledger call's arguments by name: its idempotency fields, with `context`, and the answer's body. */
function ledgerArgs(call: LedgerCall, context: 'pending' | 'done', body: string) {
  return { ...idemNamedArgs(call.idem, context), body };
}

/** The writes slice's part of tb_ranking, injected into its store (RankingCoreModule builds it). */
export class WritesFunctions extends sliceFunctions(WRITES_FUNCTIONS) {}
