import { ShardOrder } from './shard-order';

describe('ShardOrder', () => {
  it('puts each batch part behind the last one sent to its shard, and lets it go once that one is applied', async () => {
    const order = new ShardOrder();
    const first = order.batch();
    const a = first.turn('{b}', '5-0');
    expect(a).toMatchObject({ after: '' });
    expect(a.before).toBeUndefined();

    const second = order.batch();
    const b = second.turn('{b}', '9-0');
    // Another shard's part of the same batch has nothing ahead of it.
    expect(second.turn('{b/1}', '8-0')).toMatchObject({ after: '' });
    expect(b.after).toBe('5-0');
    let released = false;
    void b.before!.then(() => (released = true));
    await Promise.resolve();
    expect(released).toBe(false);
    a.applied();
    await b.before;
    expect(released).toBe(true);
    // A part sent again for the shard (a rerun with a new config) keeps its place.
    expect(second.turn('{b}', '9-0')).toBe(b);
  });

  it('fails the part behind a batch that failed; forgets every shard when the runner starts over', async () => {
    const order = new ShardOrder();
    const failing = order.batch();
    failing.turn('{b}', '5-0');
    const behind = order.batch().turn('{b}', '9-0');
    failing.finish(new Error('Redis away'));
    await expect(behind.before).rejects.toThrow('Redis away');

    order.clear();
    const fresh = order.batch().turn('{b}', '12-0');
    expect([fresh.after, fresh.before]).toEqual(['', undefined]);
  });

  it('marks every part of a batch that succeeded applied, a shard its rerun no longer writes too', async () => {
    const order = new ShardOrder();
    order.batch().finish();
    const done = order.batch();
    done.turn('{b/3}', '5-0');
    done.finish();
    await expect(order.batch().turn('{b/3}', '7-0').before).resolves.toBeUndefined();
  });
});
