import { FakeClock } from '../../harness/clock';
import { QuotaExceededError } from '../common/errors';
import { IdemRequest, IdempotentAnswerUnfundedError } from '../redis/idempotency';
import { ONE_ANSWER, withAnswerBudget } from './answer-budget';
import { ClientBudget } from './growth-quotas';
import { clientBudget } from '../../test/support/growth';

const KEYED: IdemRequest = { key: 'k', fingerprint: 'f' };

describe('withAnswerBudget', () => {
  const clock = new FakeClock(0);
  const answersBudget = (answers: number) => clientBudget({ idempotentAnswers: answers }, clock);
  const applied = (idem: IdemRequest | undefined) => Promise.resolve({ replayed: false, body: idem });
  const replayed = () => Promise.resolve({ replayed: true, body: undefined });

  it('charges stored answers, not replays, and refuses a write that needs one past the quota', async () => {
    const budget = answersBudget(2);
    await withAnswerBudget(budget, KEYED, ONE_ANSWER, applied);
    for (let i = 0; i < 5; i++) await withAnswerBudget(budget, KEYED, ONE_ANSWER, replayed);
    await withAnswerBudget(budget, KEYED, ONE_ANSWER, applied);
    const refused = withAnswerBudget(budget, KEYED, ONE_ANSWER, (idem) =>
      idem?.mayStore === false ? Promise.reject(new IdempotentAnswerUnfundedError()) : applied(idem),
    );
    await expect(refused).rejects.toBeInstanceOf(QuotaExceededError);
  });

  it('past the quota, asks for a replay only and answers it', async () => {
    const budget = answersBudget(1);
    await withAnswerBudget(budget, KEYED, ONE_ANSWER, applied);
    const seen: Array<IdemRequest | undefined> = [];
    const answer = await withAnswerBudget(budget, KEYED, ONE_ANSWER, (idem) => {
      seen.push(idem);
      return replayed();
    });
    expect([answer.replayed, seen]).toEqual([true, [{ ...KEYED, mayStore: false }]]);
  });

  it('charges a failed write what it may have stored, and keyless or unbudgeted writes nothing', async () => {
    const budget = answersBudget(3);
    const failing = () => Promise.reject(new Error('shard down'));
    await expect(withAnswerBudget(budget, KEYED, { answers: 3, chargedOnError: 3 }, failing)).rejects.toThrow();
    const refused = withAnswerBudget(budget, KEYED, ONE_ANSWER, (idem) =>
      idem?.mayStore === false ? Promise.reject(new IdempotentAnswerUnfundedError()) : applied(idem),
    );
    await expect(refused).rejects.toBeInstanceOf(QuotaExceededError);
    const fresh = answersBudget(1);
    await expect(withAnswerBudget(fresh, KEYED, ONE_ANSWER, failing)).rejects.toThrow('shard down');
    await withAnswerBudget(fresh, undefined, ONE_ANSWER, applied);
    await withAnswerBudget(undefined, KEYED, ONE_ANSWER, applied);
    expect((await withAnswerBudget(fresh, KEYED, ONE_ANSWER, applied)).replayed).toBe(false); // still 1 left
  });

  it("charges a write without a key its share when it gets a key of the service's own, and refuses it unrun past the quota", async () => {
    const { quota, client } = answersBudget(1);
    const onCluster = new ClientBudget(quota, client, clock, 0.25);
    const failing = () => Promise.reject(new Error('shard down'));
    await withAnswerBudget(onCluster, undefined, ONE_ANSWER, replayed); // the request's own re-send: stored once
    await expect(withAnswerBudget(onCluster, undefined, { answers: 2, chargedOnError: 2 }, failing)).rejects.toThrow();
    await withAnswerBudget(onCluster, undefined, ONE_ANSWER, applied);
    let ran = false;
    const refused = withAnswerBudget(onCluster, undefined, ONE_ANSWER, (idem) => {
      ran = true;
      return applied(idem);
    });
    await expect(refused).rejects.toBeInstanceOf(QuotaExceededError);
    expect(ran).toBe(false);
  });
});
