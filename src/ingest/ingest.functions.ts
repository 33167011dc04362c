import { join } from 'node:path';
import { Reply } from '../redis/replies';
import { defineLibrary, handlerModules, typedFunction } from '../redis/function-library';
import { PreparedBoard, ShardKeys, windowArgsOf } from '../ranking/core/board';
import { actorArg } from '../ranking/core/actor-rules';
import { RANKING_MODULES } from '../ranking/core/script-call';
import type { ScriptArg } from '../redis/scripts';

/** One event of a batch bound for one board shard, with the identity of the message that carried it. */
export interface IngestEntry {
  /** "<hi>-<lo>": a stream entry id, or "<sequence>-0" for JetStream; ascending within a call. */
  id: string;
  item: string;
  amount: number;
  atMs: number;
  /** The segments the event also counts in (absent: none). */
  segments?: string[];
  /** Who sent it (absent: no one): kept as an HTTP increment's actor (actor_lib). */
  actor?: string;
}

/**
 * Events of one batch part summed per (item, second, segments): what ingest_groups adds. An event with
 * an actor is a group of its own (an actor's contribution counts its events, one per event).
 */
export interface IngestGroup {
  item: string;
  amount: number;
  /** The earliest event time of the group (unix ms): hot views' firstSeen. */
  atMs: number;
  segments?: string[];
  actor?: string;
}

/** What the script did with one entry: applied now, applied by an earlier call, or refused (the reason). */
export type EntryOutcome = { kind: 'applied' } | { kind: 'skipped' } | { kind: 'refused'; reason: string };

/** The outcomes without a reason, shared by every entry that has them (never changed). */
export const APPLIED: EntryOutcome = Object.freeze({ kind: 'applied' });
const SKIPPED: EntryOutcome = Object.freeze({ kind: 'skipped' });

export interface ApplyReply {
  draining: boolean;
  dueMs: number;
  applied: number;
  outcomes: EntryOutcome[];
}

export interface ApplyCall {
  board: PreparedBoard;
  shard: ShardKeys;
  progressKey: string;
  nowMs: number;
  budgetFields: number;
  epoch: number;
  entries: IngestEntry[];
}

/** A batch part no call has seen, summed per group; the part's ids as its first and last. */
export interface GroupsCall extends Omit<ApplyCall, 'entries'> {
  firstId: string;
  lastId: string;
  events: number;
  groups: IngestGroup[];
}

export interface LeaseCall {
  lease: string;
  epochKey: string;
  instance: string;
  leaseMs: number;
  release?: boolean;
}

/** The arguments both apply functions start with: the board call's header, the fencing epoch, segments.max. */
function partHeader(call: Omit<ApplyCall, 'entries'>) {
  return [
    call.board.config.version,
    call.nowMs,
    call.budgetFields,
    ...windowArgsOf(call.board.config.windows, call.nowMs),
    call.epoch,
    call.board.config.segmentsMax ?? 0,
  ];
}

export const INGEST_FUNCTIONS = {
  /** Answers the caller's epoch while it holds the source's lease, 0 when it does not. */
  lease: typedFunction({
    name: 'tbIngestLease',
    handler: 'lease',
    numberOfKeys: 2,
    build: (call: LeaseCall) => ({
      keys: [call.lease, call.epochKey],
      args: [call.instance, call.leaseMs, call.release ? 1 : 0],
    }),
    decode: (raw): number => new Reply('tbIngestLease', [raw]).int(0),
  }),

  apply: typedFunction({
    name: 'tbIngestApply',
    handler: 'ingest_apply',
    numberOfKeys: 'dynamic',
    build: (call: ApplyCall) => ({
      keys: [...call.shard.incrementKeys, call.progressKey],
      args: entryArgs(partHeader(call), call.entries),
    }),
    decode: (raw, call): ApplyReply => {
      const reply = new Reply('tbIngestApply', raw).expectLength(3 + call.entries.length);
      return {
        draining: reply.flag(0),
        dueMs: reply.int(1),
        applied: reply.int(2),
        outcomes: call.entries.map((_, i): EntryOutcome => {
          const text = reply.string(3 + i);
          if (text === 'a') return APPLIED;
          if (text === 's') return SKIPPED;
          if (text.startsWith('r:')) return { kind: 'refused', reason: text.slice(2) };
          throw reply.unexpected(3 + i, '"a", "s" or "r:<reason>"');
        }),
      };
    },
  }),

  /** The fast path of `apply`: a fresh part of a sum board, whole; undefined: send it to `apply`. */
  groups: typedFunction({
    name: 'tbIngestGroups',
    handler: 'ingest_groups',
    numberOfKeys: 'dynamic',
    build: (call: GroupsCall) => ({
      keys: [...call.shard.incrementKeys, call.progressKey],
      args: groupArgs([...partHeader(call), call.firstId, call.lastId, call.events], call.groups),
    }),
    decode: (raw): Omit<ApplyReply, 'outcomes'> | undefined => {
      const reply = new Reply('tbIngestGroups', raw);
      if (reply.int(0) === -1) return undefined;
      reply.expectLength(3);
      return { draining: reply.flag(0), dueMs: reply.int(1), applied: reply.int(2) };
    },
  }),
};

function csv(segments: string[] | undefined): string {
  return segments?.join(',') ?? '';
}

/** ingest_apply's arguments: `header`, then per entry its id, item, amount, time, segments, actor (pushed onto `header`). */
function entryArgs(header: ScriptArg[], entries: IngestEntry[]): ScriptArg[] {
  for (const entry of entries)
    header.push(entry.id, entry.item, entry.amount, entry.atMs, csv(entry.segments), actorArg(entry.actor));
  return header;
}

/** ingest_groups' arguments: `header`, then per group its item, amount, time, segments, actor (pushed onto `header`). */
function groupArgs(header: ScriptArg[], groups: IngestGroup[]): ScriptArg[] {
  for (const group of groups)
    header.push(group.item, group.amount, group.atMs, csv(group.segments), actorArg(group.actor));
  return header;
}

/**
 * tb_ingest: the ingest functions on the ranking's shared modules (RANKING_MODULES): the apply is a
 * board write like the ranking's own. A library of its own, not part of tb_ranking, so ranking never
 * depends on ingest; the shared modules are compiled once per library that holds them. Its version is
 * derived from its assembled Lua, RANKING_MODULES' included.
 */
export const INGEST = defineLibrary({
  name: 'tb_ingest',
  modules: [
    ...RANKING_MODULES,
    // What ingest_apply and ingest_groups share: their modules are blocks of their own.
    join(__dirname, 'lua', 'ingest_lib.lua'),
    ...handlerModules(join(__dirname, 'scripts'), INGEST_FUNCTIONS),
  ],
  functions: INGEST_FUNCTIONS,
});
