import { FakeClock } from '../../../harness/clock';
import { ClientBudget } from '../../governance/growth-quotas';
import type { IdemRequest } from '../../redis/idempotency';
import { PreparedBoard } from '../core/board';
import { RankingKeys } from '../core/ranking.keys';
import { GuardedWrite, IdempotencyPolicy, RequestLedger } from './write-pipeline';
import type { LedgerEntry } from './writes.functions';
import { clientBudget } from '../../../test/support/growth';

const KEYED: IdemRequest = { key: 'k', fingerprint: 'f' };
const keys = new RankingKeys('tb:');

function boardOf(shards: number): PreparedBoard {
  const windows = [{ name: 'h', periodSec: 3600, intervalSec: 60, createdAtMs: 0 }];
  const config = { name: 'b', version: 'v1', shards, windows, maxItems: null, views: [] };
  return new PreparedBoard(config, (shard) => keys.board('b', shard));
}

/** A ledger in memory: what the claim and complete scripts would keep. */
class MemoryLedger implements RequestLedger {
  readonly bodies = new Map<string, string>();
  readonly calls: string[] = [];

  claimRequest(_: PreparedBoard, idem: IdemRequest): Promise<LedgerEntry> {
    this.calls.push(`claim ${idem.key}`);
    const body = this.bodies.get(idem.key);
    return Promise.resolve(body === undefined ? { state: 'claimed' } : { state: 'answered', body });
  }

  completeRequest(_: PreparedBoard, idem: IdemRequest, __: number, body: string): Promise<void> {
    this.calls.push(`complete ${idem.key}`);
    this.bodies.set(idem.key, body);
    return Promise.resolve();
  }
}

describe('IdempotencyPolicy', () => {
  const clock = new FakeClock(0);
  const answersBudget = (answers: number) => clientBudget({ idempotentAnswers: answers }, clock);
  const writeOn = (board: PreparedBoard, idem?: IdemRequest, budget?: ClientBudget, calls = 1): GuardedWrite => ({
    board,
    nowMs: 0,
    context: { nowMs: 0, idem, budget },
    calls,
  });

  it('leaves a one-shard board to its script: the key goes to the write as sent, no ledger call', async () => {
    const ledger = new MemoryLedger();
    const strategy = new IdempotencyPolicy(ledger).strategyFor(boardOf(1));
    expect(strategy.name).toBe('in-script');
    expect(strategy.replaysInScript).toBe(true);
    const seen: Array<IdemRequest | undefined> = [];
    await strategy.run(writeOn(boardOf(1), KEYED), (idem) => {
      seen.push(idem);
      return Promise.resolve({ replayed: false, body: 'applied' });
    });
    expect(seen).toEqual([KEYED]);
    expect(ledger.calls).toEqual([]);
  });

  it('puts a sharded board through the ledger: a repeat is answered from it without running the write', async () => {
    const ledger = new MemoryLedger();
    const strategy = new IdempotencyPolicy(ledger).strategyFor(boardOf(3));
    expect(strategy.name).toBe('ledger');
    expect(strategy.replaysInScript).toBe(false);
    let runs = 0;
    const apply = () => Promise.resolve({ replayed: false, body: { count: ++runs } });
    const first = await strategy.run(writeOn(boardOf(3), KEYED), apply);
    const again = await strategy.run(writeOn(boardOf(3), KEYED), apply);
    expect(first).toEqual({ replayed: false, body: { count: 1 } });
    expect(again).toEqual({ replayed: true, body: { count: 1 } });
    expect(runs).toBe(1);
    expect(ledger.calls).toEqual(['claim k', 'complete k', 'claim k']);
  });

  it('sends a write without a key straight to its shards on a sharded board', async () => {
    const ledger = new MemoryLedger();
    const strategy = new IdempotencyPolicy(ledger).strategyFor(boardOf(2));
    const written = await strategy.run(writeOn(boardOf(2)), (idem) => Promise.resolve({ replayed: false, body: idem }));
    expect(written.body).toBeUndefined();
    expect(ledger.calls).toEqual([]);
  });

  it('charges the ledger entry and every call of each shard part against the stored answers quota', async () => {
    const strategy = new IdempotencyPolicy(new MemoryLedger()).strategyFor(boardOf(4));
    const budget = answersBudget(4);
    const apply = () => Promise.resolve({ replayed: false, body: 'applied' });
    await strategy.run(writeOn(boardOf(4), KEYED, budget, 3), apply);
    // 1 + 3 answers taken: a second request with a new key and one call has none left to store.
    const next = strategy.run(writeOn(boardOf(4), { key: 'k2', fingerprint: 'f' }, budget, 1), (idem) =>
      Promise.resolve({ replayed: false, body: idem?.mayStore }),
    );
    await expect(next).resolves.toEqual({ replayed: false, body: false });
  });

  it("charges a one-shard write each call it plans, a failed one all but the failed call's answer", async () => {
    const strategy = new IdempotencyPolicy(new MemoryLedger()).strategyFor(boardOf(1));
    const budget = answersBudget(6);
    const mayStore = (key: string, calls: number) =>
      strategy.run(writeOn(boardOf(1), { key, fingerprint: 'f' }, budget, calls), (idem) =>
        Promise.resolve({ replayed: false, body: idem?.mayStore }),
      );
    await expect(mayStore('k1', 3)).resolves.toEqual({ replayed: false, body: undefined });
    const failed = strategy.run(writeOn(boardOf(1), { key: 'k2', fingerprint: 'f' }, budget, 3), () =>
      Promise.reject(new Error('the third call failed')),
    );
    await expect(failed).rejects.toThrow('the third call failed');
    // 3 + 2 taken: one answer left, short of a write of two calls.
    await expect(mayStore('k3', 2)).resolves.toEqual({ replayed: false, body: false });
    await expect(mayStore('k4', 1)).resolves.toEqual({ replayed: false, body: undefined });
  });
});
