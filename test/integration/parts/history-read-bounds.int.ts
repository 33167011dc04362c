import { FakeClock } from '../../../harness/clock';
import { useOwnServerRanking } from '../../../harness/ranking';
import { HISTORY_READ_BYTES_PER_CALL, HISTORY_ROWS_PER_CALL } from '../../../src/ranking/core/ranking.limits';
import { loggedCalls, logEveryCommand, stopLoggingEveryCommand, type LoggedCall } from '../../support/slowlog';

/**
 * The work of one history call grows with no snapshot's size past its bound (issue #45: at full size a
 * shard keeps snapshots of 1 000 rows): a call crossing a boundary leaves its read to the next call, a
 * count over shards weighs each snapshot by its rows. Counted without a clock, from the FCALLs and their
 * commands SLOWLOG logged (at 0 µs).
 */
const T0 = 1_699_999_980_000;
const MINUTE_MS = 60_000;

/** The rows of a snapshot text ("\x1e<item>\x1f…" each). */
const rowsOf = (text: string | null) => (text ?? '').split('\x1e').length - 1;

describe('the bounds of a history call (single)', () => {
  const clock = new FakeClock(T0);
  const own = useOwnServerRanking(clock);

  /** `rounds` boundaries of `items` items each written once (i0 the best), every shard's listing stored. */
  async function seed(name: string, shards: number, items: number, rounds: number) {
    const { ranking } = own();
    const windows = [{ name: 'm', period: '1h', interval: '1m', snapshots: { keep: 10, top: 1000 } }];
    await ranking.putBoard({ name, windows, shards });
    for (let round = 0; round < rounds; round++) {
      const entries = Array.from({ length: items }, (_, n) => ({
        item: `i${n}`,
        amount: n === 0 ? items : 1 + ((n * (round + 3)) % (items - 1)),
      }));
      while (entries.length > 0) await ranking.incrementBatch(name, entries.splice(0, 1000));
      clock.advanceMs(MINUTE_MS);
      await ranking.top(name, 'm', 0, 1);
    }
  }

  /** The calls `read` sends, each with its script's commands. */
  async function logged(read: () => Promise<unknown>): Promise<LoggedCall[]> {
    await logEveryCommand(own().node);
    await read();
    const calls = await loggedCalls(own().node);
    await stopLoggingEveryCommand(own().node);
    return calls;
  }

  const named = (calls: LoggedCall[], name: string) => calls.filter(({ call }) => String(call[1]).endsWith(name));

  it('stores a listing of more than a few rows in a call of its own, the read in the next', async () => {
    await seed('cross', 1, 300, 2);
    clock.advanceMs(MINUTE_MS);
    const calls = await logged(() => own().ranking.history('cross', 'm', undefined));
    const reads = named(calls, '_history_read');
    expect(reads).toHaveLength(2);
    const gets = (call: LoggedCall) => call.commands.filter(([command]) => command.toUpperCase() === 'GET');
    expect(reads[0].commands.some(([command]) => command.toUpperCase() === 'SET')).toBe(true);
    expect(gets(reads[0])).toEqual([]);
  });

  it('weighs each point a count over shards reads by its snapshot rows', async () => {
    await seed('counted', 8, 2100, 6);
    const calls = await logged(() => own().ranking.itemHistory('counted', 'm', 'i0', undefined, undefined));
    const counts = named(calls, '_history_count_shards');
    expect(counts.length).toBeGreaterThan(1);
    for (const count of counts) {
      const texts = count.commands.filter(([command]) => command.toUpperCase() === 'GET').map(([, key]) => key);
      let rows = 0;
      for (const key of texts) rows += rowsOf(await own().node.get(key));
      expect(rows).toBeLessThanOrEqual(HISTORY_ROWS_PER_CALL);
    }
  });

  /** The bytes each history_read call of `calls` read of a snapshot's text (GETRANGE), and whether one GETs it whole. */
  function textReads(calls: LoggedCall[]) {
    const reads = named(calls, '_history_read');
    const commands = reads.flatMap((read) => read.commands);
    const ranges = commands.filter(([command]) => command.toUpperCase() === 'GETRANGE');
    return {
      calls: reads.length,
      bytes: ranges.map(([, , from, to]) => Number(to) - Number(from) + 1),
      gets: commands.filter(([command]) => command.toUpperCase() === 'GET').length,
    };
  }

  it('reads a snapshot in pages of its text, and a sharded one only as deep as the board top takes', async () => {
    await seed('paged', 1, 4000, 2);
    await seed('pagedmany', 4, 4000, 2);
    const answers: Array<{ items: unknown[] }> = [];
    for (const name of ['paged', 'pagedmany']) {
      const calls = await logged(async () => answers.push(await own().ranking.history(name, 'm', undefined)));
      const read = textReads(calls);
      expect(read.gets).toBe(0);
      for (const bytes of read.bytes) expect(bytes).toBeLessThanOrEqual(HISTORY_READ_BYTES_PER_CALL);
      // One shard's 1 000 rows take pages; four shards' first pages hold the board's 1 000 best.
      if (name === 'paged') expect(read.calls).toBeGreaterThanOrEqual(2);
      else expect(read.calls).toBe(4);
    }
    expect(answers[1].items).toHaveLength(1000);
    expect(answers[1].items).toEqual(answers[0].items);
  });

  it('reads the next page of a snapshot only while the text still holds the page before it', async () => {
    await seed('seam', 1, 4000, 2);
    const { functions, node } = own();
    const call = functions.call.bind(functions);
    const replies: Array<{ snapshot?: { atSec: number }; page?: unknown }> = [];
    const spy = jest.spyOn(functions, 'call').mockImplementation(async (fn, input) => {
      const reply = (await call(fn, input as never)) as { snapshot?: { atSec: number }; page?: unknown };
      if (!/history_?read$/i.test(String((fn as { name?: string }).name))) return reply;
      replies.push(reply);
      if (replies.length === 1 && reply.snapshot && reply.page) {
        // The same text length, each row moved: the first row put last (a rewrite keeping its length).
        const [key] = await node.keys(`*seam*snap:${reply.snapshot.atSec}`);
        const text = (await node.get(key)) ?? '';
        const first = text.indexOf('\x1e', 1);
        await node.set(key, text.slice(first) + text.slice(0, first), 'KEEPTTL');
      }
      return reply;
    });
    await own().ranking.history('seam', 'm', undefined);
    spy.mockRestore();
    expect(replies[0].page).toBeDefined();
    expect(replies[1].snapshot).toBeUndefined();
  });
});
