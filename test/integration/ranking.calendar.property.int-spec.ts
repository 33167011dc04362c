import fc from 'fast-check';
import { useRankingService } from '../../harness/ranking';
import { TOPOLOGIES } from '../../harness/redis';

/**
 * Calendar windows against a brute-force model that knows no period maths: an event counts in a window
 * while the local calendar date (from Intl, day by day) of its time names the same day, week, month or
 * year as now's. Clock moves cross DST changes in Berlin and New York, month ends and a leap day.
 */
interface CalendarWindow {
  name: string;
  calendar: 'day' | 'week' | 'month' | 'year';
  timeZone: string;
  weekStart?: 'monday' | 'sunday';
  archive?: { keep: number; top: number };
}

const WINDOWS: CalendarWindow[] = [
  { name: 'berlinDay', calendar: 'day', timeZone: 'Europe/Berlin', archive: { keep: 3, top: 3 } },
  { name: 'nyWeek', calendar: 'week', timeZone: 'America/New_York', weekStart: 'sunday', archive: { keep: 2, top: 2 } },
  { name: 'berlinMonth', calendar: 'month', timeZone: 'Europe/Berlin' },
  { name: 'nyDay', calendar: 'day', timeZone: 'America/New_York' },
];
const ITEMS = ['a', 'b', 'c', 'd'];
const HOUR_MS = 3_600_000;

/** Around these instants the zones change offset, or a month, a leap day or a year ends (UTC). */
const INTERESTING_MS = [
  '2024-03-31T01:00:00Z', // Berlin springs forward: a 23-hour day
  '2024-10-27T01:00:00Z', // Berlin falls back: a 25-hour day
  '2024-03-10T07:00:00Z', // New York springs forward
  '2024-11-03T06:00:00Z', // New York falls back
  '2024-02-29T23:00:00Z', // leap day ends in Berlin
  '2024-12-31T23:00:00Z', // the year ends in Berlin
  '2025-04-30T22:00:00Z', // April ends in Berlin
].map((iso) => Date.parse(iso));

const localDate = new Map<string, Intl.DateTimeFormat>();

/** The local civil date [year, month, day] of an instant in a zone, by the runtime's Intl data. */
function civilDate(zone: string, atMs: number): [number, number, number] {
  let format = localDate.get(zone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-CA', { timeZone: zone, year: 'numeric', month: '2-digit', day: '2-digit' });
    localDate.set(zone, format);
  }
  const [y, m, d] = format.format(atMs).split('-').map(Number);
  return [y, m, d];
}

/** Which period of the window holds an instant, as a key: the local date of its first day. */
function periodKey(window: CalendarWindow, atMs: number): string {
  const [y, m, d] = civilDate(window.timeZone, atMs);
  switch (window.calendar) {
    case 'day':
      return `${y}-${m}-${d}`;
    case 'month':
      return `${y}-${m}`;
    case 'year':
      return `${y}`;
    case 'week': {
      const civil = new Date(Date.UTC(y, m - 1, d));
      const first = window.weekStart === 'sunday' ? 0 : 1;
      civil.setUTCDate(civil.getUTCDate() - ((civil.getUTCDay() - first + 7) % 7));
      return civil.toISOString().slice(0, 10);
    }
  }
}

interface Event {
  item: string;
  amount: number;
  key: string;
  atMs: number;
  /** Arrival order: on `last`, equal event times go to the later arrival. */
  seq: number;
}

/** sum: increments; max / min / last: scores, each window the best of its period. */
type Aggregate = 'sum' | 'max' | 'min' | 'last';

class CalendarModel {
  private readonly events = new Map<string, Event[]>();
  private readonly lastCall = new Map<string, string>();
  readonly archives = new Map<string, Array<{ key: string; rows: Array<[string, number]> }>>();
  private seq = 0;

  constructor(readonly aggregate: Aggregate) {}

  /** A call at `nowMs`: the first one in a new period archives the last period a call ran in. */
  touch(nowMs: number): void {
    for (const w of WINDOWS) {
      const key = periodKey(w, nowMs);
      const last = this.lastCall.get(w.name);
      if (last !== undefined && last !== key && w.archive) {
        const rows = this.standings(w, last).slice(0, w.archive.top);
        const kept = this.archives.get(w.name) ?? [];
        if (rows.length > 0) this.archives.set(w.name, [...kept, { key: last, rows }].slice(-w.archive.keep));
      }
      this.lastCall.set(w.name, key);
    }
  }

  /** Adds an event at `atMs` to every window whose current period holds it; false when none does. */
  add(nowMs: number, atMs: number, item: string, amount: number): boolean {
    const holding = WINDOWS.filter((w) => periodKey(w, atMs) === periodKey(w, nowMs));
    for (const w of holding) {
      const list = this.events.get(w.name) ?? [];
      list.push({ item, amount, key: periodKey(w, atMs), atMs, seq: this.seq++ });
      this.events.set(w.name, list);
    }
    return holding.length > 0;
  }

  /** Score per item in a period, best first; equal scores in descending byte order of id (ZREVRANGE). */
  standings(window: CalendarWindow, key: string): Array<[string, number]> {
    const best = new Map<string, Event>();
    for (const e of this.events.get(window.name) ?? []) {
      if (e.key !== key) continue;
      const held = best.get(e.item);
      if (this.aggregate === 'sum') best.set(e.item, { ...e, amount: e.amount + (held?.amount ?? 0) });
      else if (held === undefined || this.beats(e, held)) best.set(e.item, e);
    }
    // A sum is listed above 0; a max / min / last score whatever its sign.
    return [...best.values()]
      .map((e): [string, number] => [e.item, e.amount])
      .filter(([, score]) => this.aggregate !== 'sum' || score > 0)
      .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? 1 : -1));
  }

  private beats(e: Event, held: Event): boolean {
    if (this.aggregate === 'max') return e.amount > held.amount;
    if (this.aggregate === 'min') return e.amount < held.amount;
    return e.atMs > held.atMs || (e.atMs === held.atMs && e.seq > held.seq);
  }
}

const step = fc.oneof(
  fc.record({
    kind: fc.constant('inc' as const),
    item: fc.constantFrom(...ITEMS),
    amount: fc.integer({ min: -3, max: 9 }).filter((n) => n !== 0),
    // How far back the event happened (0: now); often before the current period's start.
    backMs: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 30 * HOUR_MS })),
  }),
  fc.record({
    kind: fc.constant('move' as const),
    ms: fc.oneof(fc.integer({ min: 1000, max: 3 * HOUR_MS }), fc.integer({ min: HOUR_MS, max: 9 * 24 * HOUR_MS })),
  }),
);
type Step = typeof step extends fc.Arbitrary<infer S> ? S : never;

/**
 * A found counterexample: on 3 shards, the New York week archives listed a week older than the newest
 * `keep` (a shard that scored in no later week still held it).
 */
const SHARD_WENT_QUIET: [number, number, 1 | 3, Step[], Aggregate] = [
  Date.parse('2024-03-10T07:00:00Z'),
  -88881399,
  3,
  [
    { kind: 'inc', item: 'b', amount: 1, backMs: 84107749 },
    { kind: 'move', ms: 747425064 },
    { kind: 'move', ms: 5691942 },
    { kind: 'inc', item: 'a', amount: 7, backMs: 0 },
    { kind: 'inc', item: 'd', amount: 7, backMs: 104199996 },
    { kind: 'move', ms: 677500027 },
    { kind: 'move', ms: 377123486 },
    { kind: 'move', ms: 9895540 },
    { kind: 'inc', item: 'c', amount: 5, backMs: 92373627 },
    { kind: 'move', ms: 245317567 },
    { kind: 'inc', item: 'c', amount: -1, backMs: 52993508 },
    { kind: 'inc', item: 'c', amount: 4, backMs: 98486393 },
  ],
  'sum',
];

describe.each(TOPOLOGIES)('calendar windows against a brute-force model (property, %s)', (topology) => {
  const setup = useRankingService(topology, { EXPIRE_CHUNK: '2' });
  const { clock } = setup;
  let board = 0;
  let archivesChecked = 0;

  it('scores, ranks, spans and archives match the model across DST changes and month ends (sum, and the best of the period on max / min / last)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...INTERESTING_MS),
        fc.integer({ min: -40 * HOUR_MS, max: 4 * HOUR_MS }),
        fc.constantFrom(1, 3),
        fc.array(step, { minLength: 1, maxLength: 30 }),
        fc.constantFrom<Aggregate>('sum', 'max', 'min', 'last'),
        async (aroundMs, offsetMs, shards, steps, aggregate) => {
          const name = `cal${board++}`;
          clock.setMs(aroundMs + offsetMs);
          await setup.ranking.putBoard({ name, windows: WINDOWS, shards, aggregate });
          const model = new CalendarModel(aggregate);
          for (const s of steps) {
            const nowMs = clock.nowMs();
            if (s.kind === 'move') {
              clock.advanceMs(s.ms);
            } else {
              const atMs = nowMs - s.backMs;
              const counts = model.add(nowMs, atMs, s.item, s.amount);
              model.touch(nowMs);
              const write =
                aggregate === 'sum'
                  ? setup.ranking.increment(name, s.item, s.amount, undefined, undefined, atMs / 1000)
                  : setup.ranking.score(name, s.item, s.amount, undefined, undefined, atMs / 1000);
              if (counts) await write;
              else await expect(write).rejects.toThrow(/closed period/);
            }
            await compare(name, model);
          }
          await setup.ranking.deleteBoard(name);
        },
      ),
      // A failure's shrinking may outlast the test's timeout (a jest timeout, no counterexample): loop
      // FC_SEED=<seed> (test/support/property-seed.ts) with a short --testTimeout to find it.
      { numRuns: topology === 'single' ? 80 : 20, examples: [SHARD_WENT_QUIET] },
    );
    expect(archivesChecked).toBeGreaterThan(3);
    // 27 s measured on a busy 2-core machine: Jest's 60 s left too little room.
  }, 180_000);

  async function compare(name: string, model: CalendarModel): Promise<void> {
    const nowMs = clock.nowMs();
    model.touch(nowMs);
    for (const w of WINDOWS) {
      const key = periodKey(w, nowMs);
      const top = await setup.ranking.top(name, w.name, 0, 10);
      // from/to bound exactly the period holding now, by the model's own notion of a period; one expect
      // for the window: an expectation costs more to build than a row to compare.
      const [from, to] = [Number(top.from) * 1000, Number(top.to) * 1000];
      expect({
        standings: top.items.map((row) => [row.item, row.score]),
        timeZone: top.timeZone,
        from: periodKey(w, from),
        to: periodKey(w, to - 1),
        beforeFromInside: periodKey(w, from - 1) === key,
        toInside: periodKey(w, to) === key,
      }).toEqual({
        standings: model.standings(w, key),
        timeZone: w.timeZone,
        from: key,
        to: key,
        beforeFromInside: false,
        toInside: false,
      });
      if (w.archive) await compareArchive(name, w, model);
    }
  }

  async function compareArchive(name: string, w: CalendarWindow, model: CalendarModel): Promise<void> {
    const expected = model.archives.get(w.name) ?? [];
    const page = await setup.ranking.archives(name, w.name, 10, undefined);
    expect(page.periods.map((p) => periodKey(w, p.from * 1000))).toEqual(expected.map((a) => a.key).reverse());
    expect(page.periods.map((p) => p.items.map((row) => [row.item, row.score]))).toEqual(
      expected.map((a) => a.rows).reverse(),
    );
    archivesChecked += expected.length;
  }
});
