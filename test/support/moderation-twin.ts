import fc from 'fast-check';
import type { Response } from 'supertest';
import { ADMIN } from '../../harness/app';
import type { useTestApp } from './app-world';

/**
 * What the twin-board moderation properties share: a moderated board and a never-moderated twin get
 * the same events; items and groups are hidden, allowed and cleared on the moderated one only, and
 * its listings must equal the twin's without the items moderation leaves out, ranks closed.
 */
export const POOL = ['a', 'b', 'c', 'd', 'e', 'é', 'x y'];
export const GROUPS = ['g1', 'g2'];
export const MINUTE_MS = 60_000;

export type State = 'hidden' | 'allowed' | null;
export type Entry = { item: string; amount: number; group: string };
export type Step =
  | { kind: 'batch'; entries: Entry[] }
  | { kind: 'move'; minutes: number }
  | { kind: 'item' | 'group'; id: string; state: State };

const stateOf = fc.constantFrom<State>('hidden', 'allowed', null);

export const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('batch' as const),
      entries: fc.array(
        fc.record({
          item: fc.constantFrom(...POOL),
          amount: fc.integer({ min: -2, max: 5 }).filter((n) => n !== 0),
          group: fc.constantFrom(...GROUPS),
        }),
        { minLength: 1, maxLength: 6 },
      ),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('move' as const), minutes: fc.integer({ min: 1, max: 2 }) }) },
  {
    weight: 3,
    arbitrary: fc.record({ kind: fc.constant('item' as const), id: fc.constantFrom(...POOL), state: stateOf }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant('group' as const), id: fc.constantFrom(...GROUPS), state: stateOf }),
  },
);

/** A batch entry in the segment or in none. */
export type Segmented = Entry & { segments?: string[] };
export type SegmentedStep<Time> =
  { kind: 'batch'; entries: Segmented[] } | Time | { kind: 'item' | 'group'; id: string; state: State };

/**
 * The steps of a group-moderation property over kept listings: batches of amounts above 0 (an item
 * leaves a window only as its slot or day closes, under its latest group), each entry in `segment` or
 * not; the clock's `time` step; mostly group states.
 */
export function segmentedSteps<Time>(segment: string, time: fc.Arbitrary<Time>): fc.Arbitrary<SegmentedStep<Time>> {
  return fc.oneof(
    {
      weight: 2,
      arbitrary: fc.record({
        kind: fc.constant('batch' as const),
        entries: fc.array(
          fc.record({
            item: fc.constantFrom(...POOL),
            amount: fc.integer({ min: 1, max: 5 }),
            group: fc.constantFrom(...GROUPS),
            segments: fc.constantFrom<string[] | undefined>(undefined, [segment]),
          }),
          { minLength: 1, maxLength: 4 },
        ),
      }),
    },
    { weight: 2, arbitrary: time },
    {
      weight: 1,
      arbitrary: fc.record({ kind: fc.constant('item' as const), id: fc.constantFrom(...POOL), state: stateOf }),
    },
    {
      weight: 3,
      arbitrary: fc.record({ kind: fc.constant('group' as const), id: fc.constantFrom(...GROUPS), state: stateOf }),
    },
  );
}

/** The first listing: every item in a group, scores equal and distinct. */
export const PRELUDE: Entry[] = POOL.map((item, i) => ({
  item,
  amount: [3, 3, 5, 1, 2, 5, 4][i],
  group: GROUPS[i % 2],
}));

export type Row = { rank: number; item: string; score: number };

export const path = (item: string) => encodeURIComponent(item);
export const key = (rows: Row[]) => rows.map(({ rank, item, score }) => `${rank} ${item} ${score}`);

/** The moderation states set so far, and each item's latest group (an item's state is its own, else its group's). */
export class Moderated {
  readonly items = new Map<string, State>();
  readonly groups = new Map<string, State>();
  readonly groupOf = new Map<string, string>();

  constructor(private readonly review: boolean) {}

  /** Whether the board lists the item: on a review board only once allowed, else unless hidden. */
  visible(item: string): boolean {
    const group = this.groupOf.get(item);
    const state = this.items.get(item) ?? (group === undefined ? undefined : this.groups.get(group)) ?? null;
    return this.review ? state === 'allowed' : state !== 'hidden';
  }
}

/** The twin's rows without the ones moderation leaves out, each competition rank less the left-out rows ranked better. */
export function closedRanks(full: Row[], visible: (item: string) => boolean): Row[] {
  return full
    .filter((row) => visible(row.item))
    .map((row) => ({ ...row, rank: row.rank - full.filter((o) => !visible(o.item) && o.rank < row.rank).length }));
}

type Http = ReturnType<typeof useTestApp>['http'];

/** Applies one step: a batch to both boards, a state to the moderated one (the clock's moves are the caller's). */
export async function applyStep(http: Http, boards: { name: string; twin: string }, s: Step, model: Moderated) {
  if (s.kind === 'move') return;
  if (s.kind === 'batch') {
    for (const b of [boards.name, boards.twin])
      await http().post(`/boards/${b}/increments`).send({ items: s.entries }).expect(200);
    for (const entry of s.entries) model.groupOf.set(entry.item, entry.group);
    return;
  }
  const at = `/admin/boards/${boards.name}/moderation/${s.kind === 'item' ? 'items' : 'groups'}/${path(s.id)}`;
  if (s.state === null) await http().delete(at).set(ADMIN).expect(204);
  else await http().put(at).set(ADMIN).send({ state: s.state }).expect(204);
  const states = s.kind === 'item' ? model.items : model.groups;
  if (s.state === null) states.delete(s.id);
  else states.set(s.id, s.state);
}

/** Clears every state (a review board: allows every group and item), after which it lists what the twin does. */
export async function clearAll(http: Http, name: string, review: boolean): Promise<void> {
  for (const [kind, ids] of [
    ['groups', GROUPS],
    ['items', POOL],
  ] as const)
    for (const id of ids) {
      const at = `/admin/boards/${name}/moderation/${kind}/${path(id)}`;
      if (review) await http().put(at).set(ADMIN).send({ state: 'allowed' }).expect(204);
      else await http().delete(at).set(ADMIN).expect(204);
    }
}

/** Every read answers the moderated board what it answers the twin (the board's name aside). */
export async function sameAnswers(http: Http, boards: { name: string; twin: string }, reads: string[]) {
  const strip = (body: Record<string, unknown>) => ({ ...body, board: undefined });
  for (const read of reads) {
    const [mine, theirs]: Response[] = await Promise.all([
      http().get(`/boards/${boards.name}${read}`),
      http().get(`/boards/${boards.twin}${read}`),
    ]);
    expect([read, mine.status, strip(mine.body)]).toEqual([read, theirs.status, strip(theirs.body)]);
  }
}

/**
 * One listing (`query`: the read's query, e.g. `window=w&span=2m`) of the moderated board against the
 * twin's: top and a page of it, every item's read (a row left out answers its score, hidden: true,
 * rank null) and each row's around. Answers how many of the twin's rows were left out.
 */
export async function compareListing(
  http: Http,
  boards: { name: string; twin: string },
  query: string,
  visible: (item: string) => boolean,
): Promise<number> {
  const { name, twin } = boards;
  const full = (await http().get(`/boards/${twin}/top?${query}&limit=50`).expect(200)).body.items as Row[];
  const expected = closedRanks(full, visible);
  const top = (await http().get(`/boards/${name}/top?${query}&limit=50`).expect(200)).body.items as Row[];
  expect([query, key(top)]).toEqual([query, key(expected)]);
  const page = (await http().get(`/boards/${name}/top?${query}&offset=1&limit=2`).expect(200)).body.items as Row[];
  expect([query, key(page)]).toEqual([query, key(expected.slice(1, 3))]);
  for (const item of POOL) {
    const read = `/items/${path(item)}?${query}`;
    const [{ body }, { body: theirs }] = await Promise.all([
      http().get(`/boards/${name}${read}`).expect(200),
      http().get(`/boards/${twin}${read}`).expect(200),
    ]);
    const row = expected.find((r) => r.item === item);
    expect([query, item, body.rank, body.hidden ?? false, body.score]).toEqual([
      query,
      item,
      row?.rank ?? null,
      theirs.rank !== null && !visible(item),
      theirs.score,
    ]);
  }
  for (const [i, row] of expected.entries()) {
    const { body } = await http()
      .get(`/boards/${name}/items/${path(row.item)}/around?${query}&radius=1`)
      .expect(200);
    expect([query, row.item, key(body.items)]).toEqual([
      query,
      row.item,
      key(expected.slice(Math.max(0, i - 1), i + 2)),
    ]);
  }
  return full.length - expected.length;
}

/** The moderated board (`review` or not) and its twin nobody moderates, both of `settings`. */
export async function createTwins(
  http: Http,
  boards: { name: string; twin: string },
  review: boolean,
  settings: Record<string, unknown>,
): Promise<void> {
  for (const [b, moderation] of [
    [boards.name, { review }],
    [boards.twin, undefined],
  ] as const)
    await http()
      .put(`/admin/boards/${b}`)
      .set(ADMIN)
      .send({ ...settings, moderation })
      .expect(201);
}

/**
 * One run of a twin property on boards of `windows`: the moderated board (`review` or not) and its
 * twin made, `steps` applied by `apply` (compared at the middle and at the end), every item then
 * cleared (allowed on a review board) and compared as all allowed, `same` asked of both, and both
 * deleted. Answers the left-out rows the compares counted.
 */
export async function runTwins<S>(run: {
  http: Http;
  boards: { name: string; twin: string };
  windows: unknown[];
  shards: number;
  review: boolean;
  steps: S[];
  apply: (s: S, states: Map<string, 'hidden' | 'allowed'>) => Promise<void>;
  compare: (states: Map<string, 'hidden' | 'allowed'>) => Promise<number>;
  same: () => Promise<void>;
}): Promise<number> {
  const { http, boards, review } = run;
  await createTwins(http, boards, review, { windows: run.windows, shards: run.shards });
  const states = new Map<string, 'hidden' | 'allowed'>();
  let leftOut = 0;
  for (const [i, s] of run.steps.entries()) {
    await run.apply(s, states);
    if (i === Math.floor(run.steps.length / 2) || i === run.steps.length - 1) leftOut += await run.compare(states);
  }
  for (const item of POOL) {
    const at = `/admin/boards/${boards.name}/moderation/items/${path(item)}`;
    if (review) await http().put(at).set(ADMIN).send({ state: 'allowed' }).expect(204);
    else await http().delete(at).set(ADMIN).expect(204);
  }
  await run.compare(new Map(POOL.map((item) => [item, 'allowed' as const])));
  await run.same();
  for (const b of [boards.name, boards.twin]) await http().delete(`/admin/boards/${b}`).set(ADMIN).expect(204);
  return leftOut;
}
