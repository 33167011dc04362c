import { RankingModel } from './ranking-model';

/** What a filtered read asks: at most perGroup rows of a group, without these items and groups. */
export interface GroupFilterAsk {
  perGroup?: number;
  items?: string[];
  groups?: string[];
}

/** A listing in board order, each row with its group: exclusions, then at most perGroup rows of a group. */
export function filteredListing<Row extends { item: string }>(
  listing: Row[],
  groupOf: (item: string) => string | undefined,
  ask: GroupFilterAsk,
): Array<Row & { group: string | undefined }> {
  const counts = new Map<string, number>();
  return listing
    .map((row) => ({ ...row, group: groupOf(row.item) }))
    .filter((row) => !ask.items?.includes(row.item) && !(row.group && ask.groups?.includes(row.group)))
    .filter((row) => {
      if (ask.perGroup === undefined || row.group === undefined) return true;
      const taken = counts.get(row.group) ?? 0;
      counts.set(row.group, taken + 1);
      return taken < ask.perGroup;
    });
}

/** The model's groups beside RankingModel: the latest named while the item stays in some window. */
export class GroupedModel extends RankingModel {
  readonly groups = new Map<string, string>();

  held(nowMs: number, item: string): boolean {
    return this.windows.some((w) => (this.sums(w.name, nowMs).get(item) ?? 0) !== 0);
  }

  name(nowMs: number, item: string, group: string | undefined): void {
    if (group !== undefined && this.held(nowMs, item)) this.groups.set(item, group);
  }

  /** Forgets the groups of items no window holds any more. */
  settle(nowMs: number): void {
    for (const item of [...this.groups.keys()]) if (!this.held(nowMs, item)) this.groups.delete(item);
  }

  /** The filtered page: exclusions, then at most perGroup rows of a group in board order, then the page. */
  page(window: string, nowMs: number, ask: GroupFilterAsk) {
    return filteredListing(this.listing(window, nowMs), (item) => this.groups.get(item), ask);
  }
}
