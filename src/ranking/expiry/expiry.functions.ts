import { functionSet } from '../../redis/function-library';
import { bareHeader } from '../../redis/function-args';
import { namedFunction } from '../../redis/named-function';
import { SEGMENTS_EXPIRED_PER_CALL } from '../options/segments/segments.limits';
import type { RankingKeys } from '../core/ranking.keys';
import { BoardCall, boardHeader } from '../core/script-call';
import { sliceFunctions } from '../core/slice-functions';

/** What an expire call left: expired data still to drain, and when the shard next has something to expire. */
export interface ExpireReply {
  draining: boolean;
  /** Unix ms; null when the shard holds no slot and no like. */
  nextDueMs: number | null;
  /** A reset's prune of the options' maps has steps left on the shard (prune_step.lua). */
  pruning: boolean;
}

/** An expire call: the work its drains may do, about a Redis command each (write-cost.ts adminStepUnits). */
export interface ExpireCall extends BoardCall {
  units: number;
}

/** Boards claimed by one scheduler pass, and when the claims lapse (the token due_complete checks). */
export interface DueClaim {
  leaseEndMs: number;
  boards: string[];
}

/** Expiry: draining a shard's expired slots, and the due index the scheduler claims boards from. */
export const EXPIRY_FUNCTIONS = functionSet('tbRank', {
  expire: namedFunction({
    flags: ['allow-oom'],
    numberOfKeys: 'dynamic',
    args: ['segments_per_call', 'units'],
    reply: ['draining', 'next_due_ms', 'pruning'],
    build: (call: ExpireCall) => ({
      keys: call.shard.allKeys,
      header: boardHeader(call),
      args: { segments_per_call: SEGMENTS_EXPIRED_PER_CALL, units: call.units },
    }),
    decode: (reply): ExpireReply => {
      const nextDueMs = reply.int('next_due_ms');
      return {
        draining: reply.flag('draining'),
        nextDueMs: nextDueMs === 0 ? null : nextDueMs,
        pruning: reply.flag('pruning'),
      };
    },
  }),

  dueClaim: namedFunction({
    flags: ['allow-oom'],
    numberOfKeys: 2,
    args: ['lease_ms', 'most', 'due_by_ms'],
    reply: ['lease_end_ms', 'boards'],
    build: (call: { keys: RankingKeys; nowMs: number; leaseMs: number; most: number; dueByMs: number }) => ({
      keys: [call.keys.dueIndex(), call.keys.dueLeases()],
      header: bareHeader(call.nowMs),
      args: {
        lease_ms: call.leaseMs,
        most: call.most,
        due_by_ms: call.dueByMs,
      },
    }),
    decode: (reply): DueClaim => ({ leaseEndMs: reply.int('lease_end_ms'), boards: reply.nested('boards').strings() }),
  }),

  dueComplete: namedFunction({
    flags: ['allow-oom'],
    numberOfKeys: 2,
    args: ['lease_end_ms', 'visited'],
    reply: ['completed'],
    build: (call: { keys: RankingKeys; leaseEndMs: number; visited: Map<string, number | null> }) => ({
      keys: [call.keys.dueIndex(), call.keys.dueLeases()],
      header: bareHeader(0),
      args: {
        lease_end_ms: call.leaseEndMs,
        visited: JSON.stringify([...call.visited].map(([board, nextDueMs]) => [board, nextDueMs ?? 0])),
      },
    }),
    /** boards completed */
    decode: (reply) => reply.int('completed'),
  }),

  sweepTurn: namedFunction({
    flags: ['allow-oom'],
    numberOfKeys: 1,
    args: ['interval_ms'],
    reply: ['turn'],
    build: (call: { keys: RankingKeys; nowMs: number; intervalMs: number }) => ({
      keys: [call.keys.dueSweep()],
      header: bareHeader(call.nowMs),
      args: { interval_ms: call.intervalMs },
    }),
    /** true: this caller sweeps now */
    decode: (reply) => reply.flag('turn'),
  }),
});

/** The expiry slice's part of tb_ranking, injected into its store (RankingCoreModule builds it). */
export class ExpiryFunctions extends sliceFunctions(EXPIRY_FUNCTIONS) {}
