import type { IdemCall } from '../../redis/idempotency';
import type { BatchEntry } from '../core/ranking.types';
import { batchOutcomeOf, type BatchAllowances, type BatchReply, shardInCalls } from './batch-calls';

const IDEM: IdemCall = { key: 'k', fingerprint: 'f', retentionMs: 60_000 };
const entriesOf = (count: number): BatchEntry[] =>
  Array.from({ length: count }, (_, n) => ({ item: `i${n}`, amount: 1, ...(n > 0 && { callKey: n }) }));
const QUOTA: BatchAllowances = { newItems: 5, newActorEntries: -1, newSegmentEntries: 10 };

function reply(applied: number, replayed = false, dueMs = 0): BatchReply {
  return {
    replayed,
    context: '',
    value: { draining: false, applied },
    created: { items: replayed ? 0 : applied, due_ms: dueMs, actor_entries: 0, segment_entries: replayed ? 0 : 2 },
  };
}

describe("a shard's part of a batch in calls", () => {
  it("sends each call's entries under the key and its first entry's place, with the quotas left", async () => {
    const sent: Array<[string[], string | undefined, BatchAllowances]> = [];
    const shard = await shardInCalls(
      entriesOf(5),
      () => 2,
      IDEM,
      QUOTA,
      (entries, idem, quota) => {
        sent.push([entries.map((entry) => entry.item), idem?.key, quota]);
        return Promise.resolve(reply(entries.length, false, 100 * sent.length));
      },
    );
    expect(sent).toEqual([
      [['i0', 'i1'], 'k', QUOTA],
      [['i2', 'i3'], 'k\n2', { newItems: 3, newActorEntries: -1, newSegmentEntries: 8 }],
      [['i4'], 'k\n4', { newItems: 1, newActorEntries: -1, newSegmentEntries: 6 }],
    ]);
    expect(shard.refused).toEqual([]);
    expect(shard.reply?.value.applied).toBe(5);
    expect(shard.reply?.created).toMatchObject({ items: 5, due_ms: 100, segment_entries: 6 });
  });

  it("starts the next call after what a replayed call applied, whatever this attempt's cut", async () => {
    const keys: Array<string | undefined> = [];
    const shard = await shardInCalls(
      entriesOf(5),
      () => 2,
      IDEM,
      QUOTA,
      (entries, idem) => {
        keys.push(idem?.key);
        // The first attempt's first call carried 3: its stored answer says so.
        return Promise.resolve(keys.length === 1 ? reply(3, true) : reply(entries.length));
      },
    );
    expect(keys).toEqual(['k', 'k\n3']);
    expect(shard.reply).toMatchObject({ replayed: false, value: { applied: 5 } });
  });

  it('refuses the entries from a failed call on, those before it applied', async () => {
    const error = new Error('stale');
    const entries = entriesOf(5);
    let calls = 0;
    const shard = await shardInCalls(
      entries,
      () => 2,
      undefined,
      QUOTA,
      (sent, idem) => {
        expect(idem).toBeUndefined();
        calls += 1;
        return calls === 2 ? Promise.reject(error) : Promise.resolve(reply(sent.length));
      },
    );
    expect(shard).toMatchObject({ refused: entries.slice(2), error });
    const { outcome } = batchOutcomeOf([shard, { refused: [] as BatchEntry[], reply: reply(1) }]);
    expect(outcome).toMatchObject({ applied: 3, replayed: false, refused: entries.slice(2), errors: [error] });
  });
});
