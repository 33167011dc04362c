import type { LookupService } from '../../src/ranking/lookup/lookup.service';
import type { RankingService } from '../../src/ranking/ranking.service';
import type { StandingService } from '../../src/ranking/standing/standing.service';

/** A row of a window's listing as a model answers it, best first. */
export type ListedRow = { rank: number; item: string; score: number };

/**
 * Reads `window` of board `name` around each listed item (one neighbour a side) and by a lookup of
 * `ids` (board ranks), and expects both to match the model's listing `expected`.
 */
export async function expectAroundAndLookup(
  setup: { ranking: RankingService; lookup: LookupService },
  read: { name: string; window: string; ids: string[] },
  expected: ListedRow[],
): Promise<void> {
  const { name, window, ids } = read;
  const ranked = (rows: ListedRow[]) => rows.map(({ rank, item }) => ({ rank, item }));
  // One expect for every item's neighbourhood: building an expectation costs more than comparing a few rows.
  const arounds = [];
  for (const row of expected) arounds.push(ranked((await setup.ranking.around(name, window, row.item, 1)).items));
  expect(arounds).toEqual(expected.map((_, i) => ranked(expected.slice(Math.max(0, i - 1), i + 2))));
  const ranks = await setup.lookup.lookup({ name, window, items: ids, relative: false, withData: false });
  expect(ranks.items.map((row) => [row.item, row.rank])).toEqual(
    ids.map((id) => [id, expected.find((r) => r.item === id)?.rank ?? null]),
  );
}

/**
 * The percentile docs/api.md defines, from the model's listing (competition ranks): the share of the
 * _other_ listed items scoring at or below `score`, in percent to two decimals; 100 when there is no
 * other. `others` are the listed rows besides the one asked about.
 */
function percentileAmong(others: ListedRow[], score: number): number {
  if (others.length === 0) return 100;
  const atOrBelow = others.filter((row) => row.score <= score).length;
  return Math.round((atOrBelow / others.length) * 10000) / 100;
}

/** An item's percentile in the model's listing `expected`: null when it is not listed. */
export function modelPercentile(expected: ListedRow[], item: string): number | null {
  const row = expected.find((r) => r.item === item);
  if (row === undefined) return null;
  const others = expected.filter((r) => r !== row);
  return percentileAmong(others, row.score);
}

/**
 * Reads the rank and percentile a record of each of `scores` would get (GET …/rank) and expects the
 * model's: 1 + the listed items scoring higher, and the percentile among every listed item and itself
 * (`listed`: whether the window would list a record of that score; else both null).
 */
export async function expectRankOfScores(
  standing: StandingService,
  read: { name: string; window?: string; scores: number[]; listed: (score: number) => boolean },
  expected: ListedRow[],
): Promise<void> {
  const answers = [];
  for (const score of read.scores) {
    const answer = await standing.rank({ name: read.name, window: read.window, score });
    answers.push({ score, rank: answer.rank, percentile: answer.percentile });
  }
  const want = (score: number) =>
    read.listed(score)
      ? { rank: 1 + expected.filter((row) => row.score > score).length, percentile: percentileAmong(expected, score) }
      : { rank: null, percentile: null };
  expect(answers).toEqual(read.scores.map((score) => ({ score, ...want(score) })));
}
