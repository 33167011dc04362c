import { flagReply, intReply, Reply } from '../../redis/replies';
import { typedFunction } from '../../redis/function-library';
import { SEGMENTS_EXPIRED_PER_CALL } from '../core/ranking.limits';
import type { RankingKeys } from '../core/ranking.keys';
import { BoardCall, boardArgs } from '../core/script-call';
import { sliceFunctions } from '../core/slice-functions';

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

/** Expiry: draining a shard's expired slots, and the due index the scheduler claims boards from. */
export const EXPIRY_FUNCTIONS = {
  expire: typedFunction({
    name: 'tbRankExpire',
    handler: 'expire',
    flags: ['allow-oom'],
    numberOfKeys: 'dynamic',
    build: (call: BoardCall) => ({
      keys: call.shard.allKeys,
      args: [...boardArgs(call), SEGMENTS_EXPIRED_PER_CALL],
    }),
    decode: (raw): ExpireReply => {
      const reply = new Reply('tbRankExpire', raw).expectLength(2);
      const nextDueMs = reply.int(1);
      return { draining: reply.flag(0), nextDueMs: nextDueMs === 0 ? null : nextDueMs };
    },
  }),

  dueClaim: typedFunction({
    name: 'tbRankDueClaim',
    handler: 'due_claim',
    flags: ['allow-oom'],
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

  dueComplete: typedFunction({
    name: 'tbRankDueComplete',
    handler: 'due_complete',
    flags: ['allow-oom'],
    numberOfKeys: 2,
    build: (call: { keys: RankingKeys; leaseEndMs: number; visited: Map<string, number | null> }) => ({
      keys: [call.keys.dueIndex(), call.keys.dueLeases()],
      args: [call.leaseEndMs, ...[...call.visited].flatMap(([board, nextDueMs]) => [board, nextDueMs ?? 0])],
    }),
    /** boards completed */
    decode: (raw) => intReply('tbRankDueComplete', raw),
  }),

  sweepTurn: typedFunction({
    name: 'tbRankSweepTurn',
    handler: 'sweep_turn',
    flags: ['allow-oom'],
    numberOfKeys: 1,
    build: (call: { keys: RankingKeys; nowMs: number; intervalMs: number }) => ({
      keys: [call.keys.dueSweep()],
      args: [call.nowMs, call.intervalMs],
    }),
    /** true: this caller sweeps now */
    decode: (raw) => flagReply('tbRankSweepTurn', raw),
  }),
};

/** The expiry slice's part of tb_ranking, injected into its store (RankingCoreModule builds it). */
export class ExpiryFunctions extends sliceFunctions(EXPIRY_FUNCTIONS) {}
