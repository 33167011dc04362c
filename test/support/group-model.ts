/**
 * Group boards, written as plainly as possible: the oracle of the group boards' property test. Given
 * the member window's listed scores (a RankingModel's listing), a group's score is Σ decay^i · s_i over
 * its `top` best listed members (the weights as repeated products, as group_of_lib.lua computes them);
 * a member the member board does not list (moderation) is left out of `memberScores` by the caller.
 */
export interface GroupRow {
  rank: number;
  item: string;
  score: number;
}

export class GroupModel {
  /** item -> its group */
  readonly members = new Map<string, string>();

  constructor(
    readonly top: number,
    readonly decay: number,
  ) {}

  /** The item joins `group` (null: leaves its group); a PUT moves it. */
  join(item: string, group: string | null): void {
    if (group === null) this.members.delete(item);
    else this.members.set(item, group);
  }

  /**
   * Each group's counted members: its `top` best listed members, best first, ties in the order the
   * member board pages them (descending byte order; order asc: ascending). `memberScores`: as `listing`'s.
   */
  counted(
    memberScores: ReadonlyArray<{ item: string; score: number }>,
    ascending = false,
  ): Map<string, Array<{ item: string; score: number }>> {
    const sign = ascending ? -1 : 1;
    const byGroup = new Map<string, Array<{ item: string; score: number }>>();
    for (const { item, score } of memberScores) {
      const group = this.members.get(item);
      if (group !== undefined) byGroup.set(group, [...(byGroup.get(group) ?? []), { item, score }]);
    }
    for (const [group, rows] of byGroup) {
      rows.sort(
        (a, b) => sign * (b.score - a.score) || sign * Buffer.compare(Buffer.from(b.item), Buffer.from(a.item)),
      );
      byGroup.set(group, rows.slice(0, this.top));
    }
    return byGroup;
  }

  /** A group's score from its counted members, best first: Σ decay^i · s_i (the weights as repeated products). */
  scoreOf(counted: ReadonlyArray<{ score: number }>): number {
    let sum = 0;
    let weight = 1;
    for (const { score } of counted) {
      sum += weight * score;
      weight *= this.decay;
    }
    return sum;
  }

  /**
   * The group board's listing: highest first, ties in descending byte order, competition ranks; over a
   * member board of order asc (`ascending`) a group sums its lowest members and the lowest sum ranks
   * first, ties in ascending byte order. `memberScores`: the member window's listed items only.
   */
  listing(memberScores: ReadonlyArray<{ item: string; score: number }>, ascending = false): GroupRow[] {
    const counted = this.counted(memberScores, ascending);
    return ranked(
      [...counted].map(([group, members]): [string, number] => [group, this.scoreOf(members)]),
      ascending,
    );
  }
}

/** Groups' (group, score) pairs as the group board ranks them (GroupModel.listing's order and ranks). */
export function ranked(scores: Array<[string, number]>, ascending = false): GroupRow[] {
  const sign = ascending ? -1 : 1;
  const rows = scores.sort(
    ([a, sa], [b, sb]) => sign * (sb - sa) || sign * Buffer.compare(Buffer.from(b), Buffer.from(a)),
  );
  return rows.map(([item, score]) => ({
    rank: 1 + rows.filter(([, s]) => sign * (s - score) > 0).length,
    item,
    score,
  }));
}
