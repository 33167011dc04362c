import { bareHeader, callArgs } from '../../redis/function-args';
import { NamedReply } from '../../redis/replies';
import { typedFunction } from '../../redis/function-library';
import { SEGMENTS_EXPIRED_PER_CALL } from '../options/segments/segments.limits';
import type { RankingKeys } from '../core/ranking.keys';
import { BoardCall, boardHeader } from '../core/script-call';
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

const EXPIRE_ARGS = ['segments_per_call'] as const;
const EXPIRE_REPLY = ['draining', 'next_due_ms'] as const;
const CLAIM_ARGS = ['lease_ms', 'most', 'due_by_ms'] as const;
const CLAIM_REPLY = ['lease_end_ms', 'boards'] as const;
const COMPLETE_ARGS = ['lease_end_ms', 'visited'] as const;
const COMPLETE_REPLY = ['completed'] as const;
const TURN_ARGS = ['interval_ms'] as const;
const TURN_REPLY = ['turn'] as const;

/** Expiry: draining a shard's expired slots, and the due index the scheduler claims boards from. */
export const EXPIRY_FUNCTIONS = {
  expire: typedFunction({
    name: 'tbRankExpire',
    handler: 'expire',
    flags: ['allow-oom'],
    numberOfKeys: 'dynamic',
    contract: { args: EXPIRE_ARGS, reply: EXPIRE_REPLY },
    build: (call: BoardCall) => ({
      keys: call.shard.allKeys,
      args: callArgs(boardHeader(call), EXPIRE_ARGS, { segments_per_call: SEGMENTS_EXPIRED_PER_CALL }),
    }),
    decode: (raw): ExpireReply => {
      const reply = new NamedReply('tbRankExpire', EXPIRE_REPLY, raw);
      const nextDueMs = reply.int('next_due_ms');
      return { draining: reply.flag('draining'), nextDueMs: nextDueMs === 0 ? null : nextDueMs };
    },
  }),

  dueClaim: typedFunction({
    name: 'tbRankDueClaim',
    handler: 'due_claim',
    flags: ['allow-oom'],
    numberOfKeys: 2,
    contract: { args: CLAIM_ARGS, reply: CLAIM_REPLY },
    build: (call: { keys: RankingKeys; nowMs: number; leaseMs: number; most: number; dueByMs: number }) => ({
      keys: [call.keys.dueIndex(), call.keys.dueLeases()],
      args: callArgs(bareHeader(call.nowMs), CLAIM_ARGS, {
        lease_ms: call.leaseMs,
        most: call.most,
        due_by_ms: call.dueByMs,
      }),
    }),
    decode: (raw): DueClaim => {
      const reply = new NamedReply('tbRankDueClaim', CLAIM_REPLY, raw);
      const boards = reply.nested('boards');
      return {
        leaseEndMs: reply.int('lease_end_ms'),
        boards: Array.from({ length: boards.length }, (_, i) => boards.string(i)),
      };
    },
  }),

  dueComplete: typedFunction({
    name: 'tbRankDueComplete',
    handler: 'due_complete',
    flags: ['allow-oom'],
    numberOfKeys: 2,
    contract: { args: COMPLETE_ARGS, reply: COMPLETE_REPLY },
    build: (call: { keys: RankingKeys; leaseEndMs: number; visited: Map<string, number | null> }) => ({
      keys: [call.keys.dueIndex(), call.keys.dueLeases()],
      args: callArgs(bareHeader(0), COMPLETE_ARGS, {
        lease_end_ms: call.leaseEndMs,
        visited: JSON.stringify([...call.visited].map(([board, nextDueMs]) => [board, nextDueMs ?? 0])),
      }),
    }),
    /** boards completed */
    decode: (raw) => new NamedReply('tbRankDueComplete', COMPLETE_REPLY, raw).int('completed'),
  }),

  sweepTurn: typedFunction({
    name: 'tbRankSweepTurn',
    handler: 'sweep_turn',
    flags: ['allow-oom'],
    numberOfKeys: 1,
    contract: { args: TURN_ARGS, reply: TURN_REPLY },
    build: (call: { keys: RankingKeys; nowMs: number; intervalMs: number }) => ({
      keys: [call.keys.dueSweep()],
      args: callArgs(bareHeader(call.nowMs), TURN_ARGS, { interval_ms: call.intervalMs }),
    }),
    /** true: this caller sweeps now */
    decode: (raw) => new NamedReply('tbRankSweepTurn', TURN_REPLY, raw).flag('turn'),
  }),
};

/** The expiry slice's part of tb_ranking, injected into its store (RankingCoreModule builds it). */
export class ExpiryFunctions extends sliceFunctions(EXPIRY_FUNCTIONS) {}
