import fc from 'fast-check';
import { RankingModel } from '../../support/ranking-model';
import { moveClock, RankingOp, rankingOps } from '../../support/ranking-ops';
import { useRankingService } from '../../../harness/ranking';
import { SHARD_CELLS } from '../../../harness/redis';

const WINDOWS = [
  { name: 'short', periodSec: 30, intervalSec: 10 },
  { name: 'long', periodSec: 120, intervalSec: 40 },
];
const ITEMS = ['a', 'b', 'c', 'é'];
const USERS = ['u1', 'u2'];

/** A write sent 1-3 times with its own key (a client retrying), or an earlier write sent again later. */
const step = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      op: rankingOps({ items: ITEMS, users: USERS, maxAdvanceMs: 60_000 }),
      sends: fc.integer({ min: 1, max: 3 }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ resend: fc.nat() }) },
);

const CASES = SHARD_CELLS;

describe.each(CASES)('retried writes count once (property, %s, %i shard(s))', (topology, shards) => {
  const setup = useRankingService(topology, { EXPIRE_CHUNK: '3' });
  const { clock } = setup;
  let board = 0;

  it('random writes, each sent 1-3 times with its key, leave every window equal to the model', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 30 }), async (steps) => {
        const name = `i${board++}`;
        clock.setMs(1_700_000_000_000);
        await setup.ranking.putBoard({
          name,
          windows: WINDOWS.map((w) => ({ name: w.name, period: w.periodSec, interval: w.intervalSec })),
          shards,
        });
        const model = new RankingModel(WINDOWS);
        const sent: Array<{ op: RankingOp; key: string; first: unknown }> = [];
        for (const s of steps) {
          if ('resend' in s) {
            if (sent.length === 0) continue;
            const earlier = sent[s.resend % sent.length];
            const again = await send(name, earlier.op, earlier.key);
            expect(again?.replayed).toBe(true);
            expect(again?.body).toEqual(earlier.first); // sharded too: the ledger holds the whole answer
            continue;
          }
          if (s.op.kind === 'advance' || s.op.kind === 'toBoundary') {
            moveClock(clock, s.op);
            continue;
          }
          const key = `k${sent.length}`;
          const nowMs = clock.nowMs();
          const answers = [];
          for (let i = 0; i < s.sends; i++) answers.push(await send(name, s.op, key));
          expect(answers.map((a) => a?.replayed)).toEqual(answers.map((_, i) => i > 0));
          for (const later of answers.slice(1)) expect(later?.body).toEqual(answers[0]?.body);
          applyToModel(model, nowMs, s.op);
          sent.push({ op: s.op, key, first: answers[0]?.body });
        }
        for (const w of WINDOWS) {
          let top = await setup.ranking.top(name, w.name, 0, 1000);
          for (let i = 0; top.draining && i < 50; i++) top = await setup.ranking.top(name, w.name, 0, 1000);
          expect(top.items).toEqual(model.listed(w.name, clock.nowMs()));
        }
        await setup.ranking.deleteBoard(name);
      }),
      { numRuns: 12 },
    );
  });

  function send(name: string, op: RankingOp, key: string) {
    switch (op.kind) {
      case 'inc':
        return setup.ranking.increment(name, op.item, op.amount, key);
      case 'batch':
        return setup.ranking.incrementBatch(name, op.entries, key);
      case 'like':
      case 'unlike':
        return setup.ranking.like(name, op.item, op.user, op.kind === 'unlike', key);
      default:
        return undefined;
    }
  }
});

function applyToModel(model: RankingModel, nowMs: number, op: RankingOp): void {
  if (op.kind === 'inc') model.increment(nowMs, op.item, op.amount);
  else if (op.kind === 'batch') for (const e of op.entries) model.increment(nowMs, e.item, e.amount);
  else if (op.kind === 'like') model.like(nowMs, op.item, op.user);
  else if (op.kind === 'unlike') model.unlike(nowMs, op.item, op.user);
}
