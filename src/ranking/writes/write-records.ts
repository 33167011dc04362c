import { NamedReply, Reply } from '../../redis/replies';
import { callArgs, recordArgs } from '../../redis/function-args';
import {
  decodeIdempotentReply,
  IdemCall,
  IDEM_RECORD_FIELDS,
  Idempotent,
  idemRefusal,
  retentionArg,
} from '../../redis/idempotency';
import { growthRefusalOf } from '../../redis/refusals';
import type { ScriptArg, ScriptCall } from '../../redis/scripts';
import type { BatchEntry, StandingsReply } from '../core/ranking.types';
import { STANDING_FIELDS, withNamedStandings } from '../core/standings';
import { actorArg } from '../core/actor-rules';
import { retractedOf, segmentLimitOf } from '../core/ranking.errors';
import { BoardCall, boardHeader } from '../core/script-call';
import { scoreArg } from '../scores/scores.functions';

/*
 * The increments' and batches' records (requests and entries, and the increment's answers) on both
 * sides of the named contract: their shapes (RECORD_FIELDS in the library), how a call's requests are
 * sent, and how the increment's answers are read by name.
 */

export const INCREMENT_ARGS = ['context', 'segments_max', 'shape', 'allowance'] as const;
/**
 * What an increment or a batch created (CallContract.created): new items, the due time for the index
 * (unix ms; 0: none), new actor contributions, new segment entries.
 */
export const WRITE_CREATED = ['items', 'due_ms', 'actor_entries', 'segment_entries'] as const;
export type WriteMade = (typeof WRITE_CREATED)[number];
/** A write's standings and what every write that ranks an item creates (increments, scores, likes). */
export type StandingsWritten = Idempotent<StandingsReply, 'items' | 'due_ms'>;
/** An increment's decoded answer: its standings and what it created. */
export type IncrementWritten = Idempotent<StandingsReply, WriteMade>;
/** The increment's reply fields; its answers follow them as records (reader.answer's `records`). */
export const INCREMENT_REPLY = ['draining'] as const;
const INCREMENT_LEAD = ['draining'] as const;
/** A full increment request's fields, in the order its records send them. */
const INCREMENT_FIELDS = [
  'item',
  'amount',
  ...IDEM_RECORD_FIELDS,
  'new_items',
  'at_ms',
  'created_ms',
  'segments',
  'actor',
  'new_actor_entries',
  'new_segment_entries',
] as const;

/**
 * The record shapes of the writes' entries and requests (RECORD_FIELDS in the library): a batch's
 * pairs, full entries, and full entries with their group.
 */
export const WRITE_RECORDS = {
  increment_pair: ['item', 'amount'],
  increment_plain: ['item', 'amount', 'new_items'],
  increment_full: [...INCREMENT_FIELDS],
  increment_grouped: [...INCREMENT_FIELDS, 'group'],
  increment_answer: [...INCREMENT_LEAD, ...STANDING_FIELDS],
  increment_plain_answer: ['created', 'scores', 'ranks'],
  batch_pair: ['item', 'amount'],
  batch_full: ['item', 'amount', 'at_ms', 'created_ms', 'segments', 'actor'],
  batch_grouped: ['item', 'amount', 'at_ms', 'created_ms', 'segments', 'actor', 'group'],
} as const;

type BatchShape = 'batch_pair' | 'batch_full' | 'batch_grouped';
type IncrementShape = 'increment_pair' | 'increment_plain' | 'increment_full' | 'increment_grouped';

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
export type CoalescedAnswer = IncrementWritten | Error;

/**
 * A request of a coalesced call the call left to the next one (increment.lua's WORK_BUDGET): nothing of
 * it applied, its key not read. applyInCalls sends it again.
 */
export class NotApplied extends Error {
  constructor() {
    super('not applied: left to the next call');
  }
}
/** The tag of a request's record the call did not apply. */
const NOT_APPLIED_RECORD = 0;

/** A request refused before any of it applied answers its outcome REQUEST_REFUSED and the refusal (increment.lua). */
const REQUEST_REFUSED = -1;
const REFUSED_REQUEST = ['outcome', 'refusal'] as const;

/** The tag of a plain request's record in increment.lua's answers (a general answer's tag is its length). */
const PLAIN_RECORD = -1;

/**
 * What an increment answers for one request: idem_lib's outcome, context and counts, then its named
 * answer (RECORD_FIELDS.increment_answer), or a refusal.
 */
function incrementAnswer(answer: Reply, idem: IdemCall | undefined): CoalescedAnswer {
  const outcome = answer.head(['outcome']).int('outcome');
  // One request's reused key or refused growth refuses that request only.
  const idemRefused = idemRefusal(outcome);
  if (idemRefused) return idemRefused;
  // The refusal as a script error would carry it: the store turns it into its domain error.
  if (outcome === REQUEST_REFUSED) {
    const refusal = new Error(answer.named(REFUSED_REQUEST).string('refusal'));
    return growthRefusalOf(refusal) ?? segmentLimitOf(refusal) ?? retractedOf(refusal) ?? refusal;
  }
  return withNamedStandings(
    decodeIdempotentReply(answer, idem, (reply) => reply, WRITE_CREATED),
    INCREMENT_LEAD,
    () => ({}),
  );
}

/** A plain request's record (increment_plain_answer): what its general answer would say. */
function plainAnswer(record: Reply, call: BoardCall, draining: boolean): CoalescedAnswer {
  const answer = record.named(WRITE_RECORDS.increment_plain_answer);
  const scores = answer.ints('scores');
  const ranks = answer.ints('ranks');
  if (scores.length !== call.board.config.windows.length || ranks.length !== scores.length) {
    throw record.unexpected(0, `scores and ranks of ${call.board.config.windows.length} windows`);
  }
  return {
    replayed: false,
    context: call.board.windowNames,
    value: {
      draining,
      standings: scores.map((score, w) => ({ score, rank: ranks[w] || null, previousRank: null })),
      marks: undefined,
    },
    created: { items: answer.int('created'), due_ms: 0, actor_entries: 0, segment_entries: 0 },
  };
}

/**
 * plainAnswer's answer read in place from the record whose entries start at `first` (created, scores,
 * ranks), without a Reply per record: most requests under load are plain. Undefined for any other shape
 * (an entry missing or of another type, another count of windows), which plainAnswer then refuses in its
 * own words.
 */
function plainAnswerAt(records: Reply, first: number, call: BoardCall, draining: boolean): CoalescedAnswer | undefined {
  const created = records.entry(first);
  if (typeof created !== 'number' || !Number.isInteger(created)) return undefined;
  const windows = call.board.config.windows.length;
  const standings = plainStandings(records.entry(first + 1), records.entry(first + 2), windows);
  if (standings === undefined) return undefined;
  return {
    replayed: false,
    context: call.board.windowNames,
    value: { draining, standings, marks: undefined },
    created: PLAIN_CREATED[created] ?? { items: created, due_ms: 0, actor_entries: 0, segment_entries: 0 },
  };
}

/**
 * A plain record's `created` when it made no item or one (a plain increment makes at most one): one
 * object each for every answer, which nothing writes to.
 */
const PLAIN_CREATED: ReadonlyArray<IncrementWritten['created']> = [0, 1].map((items) => ({
  items,
  due_ms: 0,
  actor_entries: 0,
  segment_entries: 0,
}));

type PlainStanding = { score: number; rank: number | null; previousRank: null };

/** A plain record's standings from its scores and ranks (see joinedInts), undefined unless one of each per window. */
function plainStandings(scoresEntry: unknown, ranksEntry: unknown, windows: number): PlainStanding[] | undefined {
  // One window's score and rank are read as they come: no array of one for each.
  if (windows === 1 && typeof scoresEntry === 'number' && typeof ranksEntry === 'number') {
    if (!Number.isInteger(scoresEntry) || !Number.isInteger(ranksEntry)) return undefined;
    return [{ score: scoresEntry, rank: ranksEntry || null, previousRank: null }];
  }
  const scores = joinedInts(scoresEntry);
  const ranks = joinedInts(ranksEntry);
  if (scores?.length !== windows || ranks?.length !== windows) return undefined;
  const standings = new Array<PlainStanding>(windows);
  for (let w = 0; w < windows; w++) standings[w] = { score: scores[w], rank: ranks[w] || null, previousRank: null };
  return standings;
}

/** NamedReply.ints's reading of one field (an integer, or integers joined by commas), undefined for anything else. */
function joinedInts(value: unknown): number[] | undefined {
  if (typeof value === 'number') return Number.isInteger(value) ? [value] : undefined;
  if (typeof value !== 'string') return undefined;
  const ints = value.split(',').map(Number);
  return ints.every(Number.isInteger) ? ints : undefined;
}

/**
 * increment.lua's reply: draining, then its answers, one record per request, in order: -1 and a plain
 * request's record (plainAnswer), or the length of a general answer and that answer (incrementAnswer).
 * A plain record answers what its general answer would: outcome 0, the call's context, no due time,
 * no previous ranks.
 */
export function incrementAnswers(
  script: string,
  raw: unknown,
  call: BoardCall,
  requests: CoalescedIncrement[],
): CoalescedAnswer[] {
  const { reply, records } = NamedReply.withRecords(script, INCREMENT_REPLY, raw, 'answers');
  const draining = reply.flag('draining');
  const plainLength = WRITE_RECORDS.increment_plain_answer.length;
  const answers: CoalescedAnswer[] = [];
  let at = 0;
  for (const request of requests) {
    // Each record: its tag, then its entries (a general answer's tag is their count).
    const tag = records.int(at);
    if (tag === NOT_APPLIED_RECORD) {
      answers.push(new NotApplied());
      at += 1;
      continue;
    }
    const length = 1 + (tag === PLAIN_RECORD ? plainLength : tag);
    const fast = tag === PLAIN_RECORD ? plainAnswerAt(records, at + 1, call, draining) : undefined;
    if (fast !== undefined) answers.push(fast);
    else {
      const record = records.range(at, length).headed(['tag'], 'record').rest;
      answers.push(
        tag === PLAIN_RECORD
          ? plainAnswer(record, call, draining)
          : incrementAnswer(record.expectLength(2, true), request.idem),
      );
    }
    at += length;
  }
  records.expectLength(at);
  return answers;
}

/**
 * Every request's answer, sent in as many calls as the calls leave requests (NotApplied) to the next: each
 * call applies its first request, so each request is applied once. A failed call after the first fails
 * only the requests it carried; the first call's failure is thrown, as a lone call's.
 */
export async function applyInCalls<Request, Answer>(
  requests: Request[],
  send: (requests: Request[]) => Promise<Array<Answer | Error>>,
): Promise<Array<Answer | Error>> {
  const answers = new Array<Answer | Error>(requests.length);
  let left = requests.map((_, i) => i);
  while (left.length > 0) {
    const sent = left;
    const got = await send(sent.map((i) => requests[i])).catch((error: unknown) => {
      if (sent.length === requests.length) throw error;
      return sent.map(() => (error instanceof Error ? error : new Error(String(error))));
    });
    left = sent.filter((i, k) => {
      const answer = got[k];
      if (answer instanceof NotApplied) return true;
      answers[i] = answer;
      return false;
    });
    if (left.length === sent.length) throw new Error('tbRankIncrements: a call applied none of its requests');
  }
  return answers;
}

/** increment.lua's keys and arguments for the given requests, applied in this order. */
export function incrementCall(call: BoardCall, requests: CoalescedIncrement[]): ScriptCall {
  const { shape, allowance, records } = requestArgs(requests, call.nowMs, call.board.config.views.length === 0);
  const args = callArgs(boardHeader(call), INCREMENT_ARGS, {
    // The window names a write's answer is keyed by: stored with a retry-safe write, so a replay rebuilds it as it was.
    context: call.board.windowNames,
    segments_max: call.board.config.segmentsMax ?? 0,
    shape,
    allowance,
  });
  return { keys: call.shard.incrementKeys, args: [...args, ...records] };
}

/**
 * increment.lua's requests as records of one shape: when no request of the call has a key and each is
 * a plain entry (under load, most calls), increment_pair (item, amount) with the allowance they share,
 * or increment_plain (item, amount, allowance) when their allowances differ; else increment_full
 * (increment_grouped, the group last, when some request names a group). On a board without views
 * (`secondIsNow`) an event in the call's second counts as at now: the call's requests arrived within
 * one second (the coalescer groups them by second), each lands in the slots of its second either way,
 * and only a view reads an event's time finer than its second (a hot view's first sighting), so their
 * milliseconds need not travel.
 */
function requestArgs(
  requests: CoalescedIncrement[],
  nowMs: number,
  secondIsNow: boolean,
): { shape: IncrementShape; allowance: number | undefined; records: ScriptArg[] } {
  const plain = requests.every((request) => request.idem === undefined && isPlainEntry(request, nowMs, secondIsNow));
  const shared = requests[0]?.newItems;
  const pair = plain && shared !== undefined && requests.every((request) => request.newItems === shared);
  // The requests are their own rows (item, amount): no row object per request, as most calls under load are pairs.
  if (pair)
    return { shape: 'increment_pair', allowance: shared, records: recordArgs(WRITE_RECORDS.increment_pair, requests) };
  const rows = requests.map((request) => ({
    item: request.item,
    amount: request.amount,
    idem_key: request.idem?.key,
    idem_fingerprint: request.idem?.fingerprint,
    idem_retention: request.idem ? retentionArg(request.idem) : 0,
    new_items: request.newItems,
    at_ms: request.atMs ?? nowMs,
    created_ms: request.createdMs,
    segments: request.segments?.join(','),
    actor: actorArg(request.actor),
    new_actor_entries: request.newActorEntries ?? -1,
    new_segment_entries: request.newSegmentEntries ?? -1,
    group: request.group,
  }));
  const grouped = requests.some((request) => request.group !== undefined);
  const shape: IncrementShape = plain ? 'increment_plain' : grouped ? 'increment_grouped' : 'increment_full';
  return { shape, allowance: undefined, records: recordArgs(WRITE_RECORDS[shape], rows) };
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
 * increment_batch.lua's entries as records of one shape: pairs (item, amount) when every entry is plain
 * (most batches: a third of the arguments for ioredis to write and Redis to turn into Lua strings), else
 * full entries, with the group when some entry names one. One array, no array per entry.
 */
export function batchEntryArgs(entries: BatchEntry[], nowMs: number): { shape: BatchShape; records: ScriptArg[] } {
  const plain = entries.every((entry) => isPlainEntry(entry, nowMs));
  const grouped = entries.some((entry) => entry.group !== undefined);
  const shape: BatchShape = plain ? 'batch_pair' : grouped ? 'batch_grouped' : 'batch_full';
  const rows = entries.map((entry) => ({
    item: entry.item,
    amount: entry.tiebreak === undefined ? entry.amount : scoreArg(entry.amount, entry.tiebreak),
    at_ms: entry.atMs ?? nowMs,
    created_ms: entry.createdMs,
    segments: entry.segments?.join(','),
    actor: actorArg(entry.actor),
    group: entry.group,
  }));
  return { shape, records: recordArgs(WRITE_RECORDS[shape], rows) };
}
