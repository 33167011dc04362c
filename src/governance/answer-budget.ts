import type { WriteAnswer } from '../common/retry-safe';
import { answerShare, IdemRequest, IdempotentAnswerUnfundedError, replayOnly } from '../redis/idempotency';
import { ClientBudget, UNLIMITED } from './growth-quotas';

/** The answers a keyed write makes Redis keep, and those charged when it fails (some may be stored). */
export interface AnswerCost {
  answers: number;
  chargedOnError: number;
}

/** One answer, and an atomic script: a failed write stored nothing. */
export const ONE_ANSWER: AnswerCost = { answers: 1, chargedOnError: 0 };

/**
 * Runs a keyed write within its client's budget of stored answers (quota idempotentAnswers): every
 * answer Redis keeps for IDEMPOTENCY_TTL_SEC is counted, so no client makes Redis hold more than its
 * quota of them per interval. Reserved before the script runs and settled after (a replay stores
 * nothing and is not charged). A client without budget left still gets its stored answers replayed
 * (the script looks the key up and applies nothing); a write that would need a new answer is then 429
 * QUOTA_EXCEEDED before anything is applied: a retry-safe write is never applied unguarded.
 */
export function withAnswerBudget<T>(
  budget: ClientBudget | undefined,
  idem: IdemRequest | undefined,
  cost: AnswerCost,
  write: (idem: IdemRequest | undefined) => Promise<WriteAnswer<T>>,
): Promise<WriteAnswer<T>> {
  // A write without a key (most) goes straight through: no promise of its own.
  if (!idem || !budget) return write(idem);
  // An answer kept less than 24 h (Idempotency-Retention) costs its share: the quota bounds answers x time.
  const share = answerShare(idem);
  const charged = share === 1 ? cost : { answers: cost.answers * share, chargedOnError: cost.chargedOnError * share };
  return withinBudget(budget, idem, charged, write);
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
