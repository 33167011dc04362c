import type { WriteAnswer } from '../common/retry-safe';
import { answerShare, IdemRequest, IdempotentAnswerUnfundedError, replayOnly } from '../redis/idempotency';
import { ClientBudget, UNLIMITED } from './growth-quotas';

/** The answers a write makes Redis keep under its key(s), and those charged when it fails (some may be stored). */
export interface AnswerCost {
  answers: number;
  chargedOnError: number;
}

/** One answer, and an atomic script: a failed write stored nothing. */
export const ONE_ANSWER: AnswerCost = { answers: 1, chargedOnError: 0 };

/**
 * Runs a write within its client's budget of stored answers (quota idempotentAnswers): every answer
 * Redis keeps for IDEMPOTENCY_TTL_SEC is counted, so no client makes Redis hold more than its quota of
 * them per interval; an answer kept shorter counts its share (a key of the client's with an
 * Idempotency-Retention, the service's own key of a write without one on a Cluster). Reserved before
 * the script runs and settled after (a replay stores nothing and is not charged). A client without
 * budget left still gets its stored answers replayed (the script looks the key up and applies
 * nothing); a write that would need a new answer is then 429 QUOTA_EXCEEDED before anything is
 * applied: a retry-safe write is never applied unguarded.
 */
export function withAnswerBudget<T>(
  budget: ClientBudget | undefined,
  idem: IdemRequest | undefined,
  cost: AnswerCost,
  write: (idem: IdemRequest | undefined) => Promise<WriteAnswer<T>>,
): Promise<WriteAnswer<T>> {
  if (!budget) return write(idem);
  if (!idem) {
    // A write without a key (most) goes straight through on a single node: no promise of its own.
    const share = budget.keylessAnswerShare;
    return share === 0 ? write(idem) : withinKeylessBudget(budget, shareOf(cost, share), write);
  }
  // An answer kept less than 24 h (Idempotency-Retention) costs its share: the quota bounds answers x time.
  const share = answerShare(idem);
  return withinBudget(budget, idem, share === 1 ? cost : shareOf(cost, share), write);
}

function shareOf(cost: AnswerCost, share: number): AnswerCost {
  return { answers: cost.answers * share, chargedOnError: cost.chargedOnError * share };
}

/**
 * A write without a key on a Cluster: each of its calls carries a key of the service's own, whose
 * answer Redis keeps RESEND_GUARD_MS (IdemCalls), charged like an answer kept that long. No answer of
 * that key can be stored yet, so without budget the write is refused 429 before anything runs: applied
 * without its key, a re-send of ioredis after a lost reply would apply it twice. Its replay is the
 * request's own first run (ioredis' re-send), whose answer was stored once: charged the same.
 */
async function withinKeylessBudget<T>(
  budget: ClientBudget,
  cost: AnswerCost,
  write: (idem: undefined) => Promise<WriteAnswer<T>>,
): Promise<WriteAnswer<T>> {
  const reservation = budget.reserve({ idempotentAnswers: cost.answers });
  const taken = reservation.allowance('idempotentAnswers');
  if (taken !== UNLIMITED && taken < cost.answers) throw reservation.refusal('idempotentAnswers', cost.answers);
  try {
    const written = await write(undefined);
    reservation.settle({ idempotentAnswers: cost.answers });
    return written;
  } catch (error) {
    reservation.settle({ idempotentAnswers: cost.chargedOnError });
    throw error;
  }
}

async function withinBudget<T>(
  budget: ClientBudget,
  idem: IdemRequest,
  cost: AnswerCost,
  write: (idem: IdemRequest | undefined) => Promise<WriteAnswer<T>>,
): Promise<WriteAnswer<T>> {
  const reservation = budget.reserve({ idempotentAnswers: cost.answers });
  const taken = reservation.allowance('idempotentAnswers');
  if (taken !== UNLIMITED && taken < cost.answers) {
    reservation.settle();
    try {
      return await write(replayOnly(idem));
    } catch (error) {
      if (error instanceof IdempotentAnswerUnfundedError) throw reservation.refusal('idempotentAnswers', cost.answers);
      throw error;
    }
  }
  try {
    const written = await write(idem);
    reservation.settle({ idempotentAnswers: written.replayed ? 0 : cost.answers });
    return written;
  } catch (error) {
    reservation.settle({ idempotentAnswers: cost.chargedOnError });
    throw error;
  }
}
