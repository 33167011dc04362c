import type { useTestApp } from './app-world';

/** A row of an archive page as the moderation archive specs compare it. */
export type Row = { rank: number; item: string; score: number };

/** An archive page's rows, each cut to what the specs compare. */
export const rowsOf = (items: unknown): Row[] =>
  (items as Row[]).map(({ rank, item, score }) => ({ rank, item, score }));

/** The brute force: the stored rows without the items left out now, competition ranks among the rest. */
export function visibleRowsModel(stored: Row[], visible: (item: string) => boolean): Row[] {
  const rows = stored.filter((row) => visible(row.item));
  return rows.map((row) => ({
    rank: 1 + rows.filter((other) => other.score > row.score).length,
    item: row.item,
    score: row.score,
  }));
}

type Http = ReturnType<typeof useTestApp>['http'];
type Answer = { status: number; body: Record<string, unknown> };

/** A read of `board` sent again while a closed period is still being archived (503 WINDOW_DRAINING), `most` times at most. */
export async function readArchived(http: Http, board: string, route: string, most = 20): Promise<Answer> {
  for (let attempt = 0; ; attempt++) {
    const { status, body } = await http().get(`/boards/${board}${route}`);
    if (status !== 503) return { status, body };
    if (attempt >= most) throw new Error(`/boards/${board}${route} answered ${status}`);
  }
}

/** Cleared, the moderated board answers every archive read (and top) as the never-moderated twin. */
export async function sameArchiveAnswers(http: Http, boards: { name: string; twin: string }): Promise<void> {
  const strip = (body: Record<string, unknown>) => ({ ...body, board: undefined });
  for (const route of ['/archives?window=day&limit=10', '/archive?window=day&offset=1&limit=2', '/top?window=day']) {
    const [mine, theirs] = [await readArchived(http, boards.name, route), await readArchived(http, boards.twin, route)];
    expect([route, mine.status, strip(mine.body)]).toEqual([route, theirs.status, strip(theirs.body)]);
  }
}
