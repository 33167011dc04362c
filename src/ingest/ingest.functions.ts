import { defineLibrary, functionSet, handlerModules } from '../redis/function-library';
import { join } from 'node:path';
import { namedFunction } from '../redis/named-function';
import { bareHeader } from '../redis/function-args';
import type { NamedReply } from '../redis/replies';
import { PreparedBoard, ShardKeys } from '../ranking/core/board';
import { actorArg } from '../ranking/core/actor-rules';
import { boardHeader, RANKING_MODULES } from '../ranking/core/script-call';

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
  /**
   * The message named an alias its shard refused (the alias's block): sent again naming the canonical
   * item, applied once whatever the shard's progress says (ingest_apply.lua's x:<id>).
   */
  resolved?: true;
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

export const INGEST_FUNCTIONS = functionSet('tbIngest', {
  /** Answers the caller's epoch while it holds the source's lease, 0 when it does not. */
  lease: namedFunction({
    numberOfKeys: 2,
    args: ['instance', 'lease_ms', 'release'],
    reply: ['epoch'],
    build: (call: LeaseCall) => ({
      keys: [call.lease, call.epochKey],
      // Its header's time is 0: a lease expires by Redis' own clock (PX).
      header: bareHeader(0),
      args: {
        instance: call.instance,
        lease_ms: call.leaseMs,
        release: call.release ? 1 : 0,
      },
    }),
    decode: (reply): number => reply.int('epoch'),
  }),

  apply: namedFunction({
    handler: 'ingest_apply',
    numberOfKeys: 'dynamic',
    args: ['epoch', 'segments_max', 'entries'],
    reply: ['draining', 'due_ms', 'applied', 'outcomes'],
    build: (call: ApplyCall) =>
      ingestCall(call, {
        entries: JSON.stringify(
          call.entries.map((entry) => ({
            id: entry.id,
            ...eventOf(entry),
            ...(entry.resolved ? { resolved: 1 } : {}),
          })),
        ),
      }),
    decode: (reply, call): ApplyReply => {
      const outcomes = reply.nested('outcomes').expectLength(call.entries.length);
      return {
        ...progressOf(reply),
        outcomes: call.entries.map((_, i): EntryOutcome => {
          const text = outcomes.string(i);
          if (text === 'a') return APPLIED;
          if (text === 's') return SKIPPED;
          if (text.startsWith('r:')) return { kind: 'refused', reason: text.slice(2) };
          throw outcomes.unexpected(i, '"a", "s" or "r:<reason>"');
        }),
      };
    },
  }),

  /** The fast path of `apply`: a fresh part of a sum board, whole; undefined: send it to `apply`. */
  groups: namedFunction({
    handler: 'ingest_groups',
    numberOfKeys: 'dynamic',
    args: ['epoch', 'segments_max', 'first_id', 'last_id', 'events', 'groups'],
    reply: ['taken', 'draining', 'due_ms', 'applied'],
    build: (call: GroupsCall) =>
      ingestCall(call, {
        first_id: call.firstId,
        last_id: call.lastId,
        events: call.events,
        groups: JSON.stringify(call.groups.map(eventOf)),
      }),
    decode: (reply): Omit<ApplyReply, 'outcomes'> | undefined => (reply.flag('taken') ? progressOf(reply) : undefined),
  }),
});

/** An apply's call on the shard's increment keys and the source's progress: the epoch and segment cap, then `args`. */
function ingestCall<Args extends object>(call: Omit<ApplyCall, 'entries'>, args: Args) {
  return {
    keys: [...call.shard.incrementKeys, call.progressKey],
    header: boardHeader(call),
    args: { epoch: call.epoch, segments_max: call.board.config.segmentsMax ?? 0, ...args },
  };
}

/** What an apply answers of the shard's progress. */
function progressOf<Field extends string>(
  reply: NamedReply<Field | 'draining' | 'due_ms' | 'applied'>,
): Omit<ApplyReply, 'outcomes'> {
  return { draining: reply.flag('draining'), dueMs: reply.int('due_ms'), applied: reply.int('applied') };
}

/** An event or group by the names ingest_lib reads (its segments joined by commas, its actor as ACTORS.split takes it). */
function eventOf(event: IngestGroup) {
  return {
    item: event.item,
    amount: event.amount,
    at_ms: event.atMs,
    segments: event.segments?.join(',') ?? '',
    actor: actorArg(event.actor),
  };
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
