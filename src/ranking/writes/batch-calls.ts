import type { IdemCall, Idempotent } from '../../redis/idempotency';
import type { BatchEntry, BatchOutcome } from '../core/ranking.types';
import { callEntries, type CostedBoard } from '../core/write-cost';
import type { WriteMade } from './write-records';

/** A batch call's decoded reply (increment_batch.lua). */
export type BatchReply = Idempotent<{ draining: boolean; applied: number }, WriteMade>;

/** What one shard's part of a batch may create (-1: no quota), as increment_batch.lua takes it. */
export interface BatchAllowances {
  newItems: number;
  newActorEntries: number;
  newSegmentEntries: number;
}

/** One shard's calls of a batch: what they applied (replies merged), and the entries left when one failed. */
export interface ShardCalls {
  reply?: BatchReply;
  refused: BatchEntry[];
  error?: unknown;
}

/**
 * The idempotency of a call of a shard's part whose first entry is `first`: the request's own for the
 * shard's first call, else the key and the entry's place in the request (BatchEntry.callKey), which no
 * key a client sends holds (printable only): each call's answer is stored apart, so a retry replays each
 * call that applied and sends the rest, whatever calls a changed board cuts them into.
 */
function callIdem(idem: IdemCall | undefined, first: BatchEntry): IdemCall | undefined {
  if (idem === undefined || first.callKey === undefined) return idem;
  return { ...idem, key: `${idem.key}\n${first.callKey}` };
}

/** What a quota leaves after a call created `created` (-1: none). */
const left = (allowance: number, created: number) => (allowance < 0 ? allowance : Math.max(0, allowance - created));

/**
 * Sends a shard's part of a batch in calls of `carried(at)` entries from `at` on (write-cost.ts
 * callEntries), one after the other, each atomic; a call answers how many entries it applied (all it was
 * sent, or its stored answer's on a replay), and the next starts after them. A failed call ends the
 * shard: the entries from it on are refused with its error, those before it stay applied.
 */
export async function shardInCalls(
  entries: BatchEntry[],
  carried: (at: number) => number,
  idem: IdemCall | undefined,
  allowances: BatchAllowances,
  send: (entries: BatchEntry[], idem: IdemCall | undefined, allowances: BatchAllowances) => Promise<BatchReply>,
): Promise<ShardCalls> {
  let reply: BatchReply | undefined;
  let quota = allowances;
  for (let at = 0; at < entries.length;) {
    const sent = entries.slice(at, at + carried(at));
    const got = await send(sent, callIdem(idem, sent[0]), quota).catch((error: unknown) => ({ error }));
    if ('error' in got) return { reply, refused: entries.slice(at), error: got.error };
    reply = merged(reply, got);
    const { items, actor_entries: actorEntries, segment_entries: segmentEntries } = got.created;
    quota = {
      newItems: left(quota.newItems, items),
      newActorEntries: left(quota.newActorEntries, actorEntries),
      newSegmentEntries: left(quota.newSegmentEntries, segmentEntries),
    };
    at += Math.max(1, got.value.applied);
  }
  return { reply, refused: [] };
}

/** A batch's entries by shard and what each shard's part may create (writes.store.ts ShardedBatch). */
interface ShardedParts {
  board: { config: CostedBoard };
  groups: Map<number, BatchEntry[]>;
  newItems: Map<number, number>;
  newActorEntries: Map<number, number>;
  newSegmentEntries: Map<number, number>;
}

/** What one call of a shard's part sends: its entries, idempotency and quotas. */
export type BatchCallArgs = { entries: BatchEntry[]; idem: IdemCall | undefined } & BatchAllowances;

/**
 * Each shard's part of `batch` in calls of at most `workPerCall` of work (callEntries), the shards in
 * parallel: `send(shard, args)` makes one call.
 */
export function shardsInCalls(
  batch: ShardedParts,
  workPerCall: number,
  idem: IdemCall | undefined,
  send: (shard: number, args: BatchCallArgs) => Promise<BatchReply>,
): Promise<ShardCalls[]> {
  return Promise.all(
    [...batch.groups].map(([shard, entries]) => {
      const carried = (at: number) => callEntries(entries, at, batch.board.config, workPerCall);
      const quota = {
        newItems: batch.newItems.get(shard)!,
        newActorEntries: batch.newActorEntries.get(shard)!,
        newSegmentEntries: batch.newSegmentEntries.get(shard)!,
      };
      return shardInCalls(entries, carried, idem, quota, (sent, callIdem, allowances) =>
        send(shard, { entries: sent, idem: callIdem, ...allowances }),
      );
    }),
  );
}

/** Two calls' replies as one: applied and created summed, the earliest due time, replayed only if both were. */
function merged(before: BatchReply | undefined, after: BatchReply): BatchReply {
  if (before === undefined) return after;
  const dueMs = [before.created.due_ms, after.created.due_ms].filter((ms) => ms > 0);
  return {
    replayed: before.replayed && after.replayed,
    context: before.context,
    value: {
      draining: before.value.draining || after.value.draining,
      applied: before.value.applied + after.value.applied,
    },
    created: {
      items: before.created.items + after.created.items,
      due_ms: dueMs.length > 0 ? Math.min(...dueMs) : 0,
      actor_entries: before.created.actor_entries + after.created.actor_entries,
      segment_entries: before.created.segment_entries + after.created.segment_entries,
    },
  };
}

/** The shards' calls of a batch summed up, and the earliest due time they created (0: none). */
export function batchOutcomeOf(shards: ShardCalls[]): { outcome: BatchOutcome; dueMs: number } {
  const outcome: BatchOutcome = {
    replayed: true,
    draining: false,
    applied: 0,
    createdItems: 0,
    createdActorEntries: 0,
    createdSegmentEntries: 0,
    refused: [],
    errors: [],
  };
  let dueMs = 0;
  for (const { reply, refused, error } of shards) {
    if (reply !== undefined) {
      outcome.replayed &&= reply.replayed;
      outcome.draining ||= reply.value.draining;
      outcome.applied += reply.value.applied;
      outcome.createdItems += reply.created.items;
      outcome.createdActorEntries += reply.created.actor_entries;
      outcome.createdSegmentEntries += reply.created.segment_entries;
      const shardDueMs = reply.created.due_ms;
      if (shardDueMs > 0) dueMs = dueMs === 0 ? shardDueMs : Math.min(dueMs, shardDueMs);
    }
    if (error === undefined) continue;
    outcome.replayed = false;
    outcome.refused.push(...refused);
    outcome.errors.push(error);
  }
  return { outcome, dueMs };
}
