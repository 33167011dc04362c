import { ModelWindow, RankingModel, slotStart } from './ranking-model';

/** What a filtered page filters by: exclusions, at least minActors distinct actors, at most perGroup rows of a group. */
export interface ModelFilters {
  perGroup?: number;
  minActors?: number;
  items?: string[];
  groups?: string[];
}

/**
 * A listing in board order, each row with its group: exclusions, then minActors (`actorsOf` counts an
 * item's distinct actors), then at most perGroup rows of a group.
 */
export function filteredListing<Row extends { item: string }>(
  listing: Row[],
  groupOf: (item: string) => string | undefined,
  ask: ModelFilters,
  actorsOf: (item: string) => number = () => 0,
): Array<Row & { group: string | undefined }> {
  const counts = new Map<string, number>();
  return listing
    .map((row) => ({ ...row, group: groupOf(row.item) }))
    .filter((row) => !ask.items?.includes(row.item) && !(row.group && ask.groups?.includes(row.group)))
    .filter((row) => ask.minActors === undefined || actorsOf(row.item) >= ask.minActors)
    .filter((row) => {
      if (ask.perGroup === undefined || row.group === undefined) return true;
      const taken = counts.get(row.group) ?? 0;
      counts.set(row.group, taken + 1);
      return taken < ask.perGroup;
    });
}

/**
 * The model's groups beside RankingModel: the latest named while the item stays in some window; and
 * every event's actor, so an item's distinct actors in a window are those of its live slots.
 */
export class GroupedModel extends RankingModel {
  readonly groups = new Map<string, string>();
  private readonly acts: Array<{ sec: number; item: string; actor: string }> = [];

  /** `held`: the windows whose sums keep an item's group (default all; a span's model windows are no board's). */
  constructor(
    windows: ModelWindow[],
    private readonly held = windows.map((w) => w.name),
  ) {
    super(windows);
  }

  keepsGroup(nowMs: number, item: string): boolean {
    return this.held.some((name) => (this.sums(name, nowMs).get(item) ?? 0) !== 0);
  }

  name(nowMs: number, item: string, group: string | undefined): void {
    if (group !== undefined && this.keepsGroup(nowMs, item)) this.groups.set(item, group);
  }

  /** An event of `actor` on `item` now (whatever its amount): the actor counts while its slot lives. */
  acted(nowMs: number, item: string, actor: string | undefined): void {
    if (actor !== undefined) this.acts.push({ sec: Math.floor(nowMs / 1000), item, actor });
  }

  /** The distinct actors of `item` in the live slots of `window`. */
  actorsIn(window: string, nowMs: number, item: string): number {
    const w = this.windows.find((x) => x.name === window)!;
    const current = slotStart(Math.floor(nowMs / 1000), w.intervalSec);
    const live = this.acts.filter(
      (act) => act.item === item && slotStart(act.sec, w.intervalSec) > current - w.periodSec,
    );
    return new Set(live.map((act) => act.actor)).size;
  }

  /** Forgets the groups of items no window holds any more. */
  settle(nowMs: number): void {
    for (const item of [...this.groups.keys()]) if (!this.keepsGroup(nowMs, item)) this.groups.delete(item);
  }

  /**
   * The filtered page: exclusions, then minActors (the actors of `actorsWindow`), then at most perGroup
   * rows of a group in board order, then the page.
   */
  page(window: string, nowMs: number, ask: ModelFilters, actorsWindow = window) {
    const groupOf = (item: string) => this.groups.get(item);
    return filteredListing(this.listing(window, nowMs), groupOf, ask, (item) =>
      this.actorsIn(actorsWindow, nowMs, item),
    );
  }
}
