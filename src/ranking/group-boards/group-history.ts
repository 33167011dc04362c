import { boardOrder } from '../core/shard-math';
import type { ListingPart } from './group-boards.functions';
import type { MergeRule } from './sharded-settle';

/**
 * A group board's history over a sharded member board (group_parts_lib.lua): no call holds two shards'
 * keys, so each shard's crossing of a member window boundary records its part (the groups it holds
 * members of, their best `top` listed members then), and the group board's settle round merges them
 * here into the listing shard 0 keeps (group_history_store.lua), which every history and archive read
 * then reads as an unsharded member board's. Exact: a group's members at the boundary are the union of
 * the shards' parts, its counted ones the best `top` of them.
 */

/** One shard's recorded parts and the slot start of its first membership (-1: none yet). */
export interface ShardParts<Part extends Pick<ListingPart, 'atSec' | 'over' | 'quiet'> = ListingPart> {
  parts: Part[];
  since: number;
}

/**
 * The boundaries whose listing is known: no part over its room, and on a rolling window every shard's
 * part known, recorded there or empty (the shard held no member then: never, or not before `since`),
 * some shard's not quiet (one ran a call in the slot it ends, as an unsharded member board keeps a
 * listing only there); a calendar period's from the parts of the shards that wrote in it (the others
 * held no score in it).
 */
export function knownBoundaries(
  shards: Array<ShardParts<Pick<ListingPart, 'atSec' | 'over' | 'quiet'>>>,
  calendar: boolean,
): number[] {
  const all = [...new Set(shards.flatMap((shard) => shard.parts.map((part) => part.atSec)))].sort((a, b) => a - b);
  return all.filter((atSec) => {
    const parts = shards.map((shard) => shard.parts.find((part) => part.atSec === atSec));
    if (parts.some((part) => part?.over)) return false;
    if (calendar) return true;
    if (parts.every((part) => part?.quiet ?? true)) return false;
    return shards.every((shard, i) => parts[i] !== undefined || shard.since < 0 || atSec <= shard.since);
  });
}

/** A member's row in a part: its score as stored and whether it was retracted since. */
interface MemberRow {
  item: string;
  score: number;
  text: string;
  retracted: boolean;
}

function rowsOf(flat: Array<string | number>): MemberRow[] {
  const rows: MemberRow[] = [];
  for (let i = 0; i + 2 < flat.length; i += 3) {
    const text = String(flat[i + 1]);
    rows.push({ item: String(flat[i]), score: Number(text), text, retracted: flat[i + 2] === 1 });
  }
  return rows;
}

/** Σ decay^i · s_i over `rows` best first (the weights as repeated products, as group_of_lib sums them). */
function weighed(rows: MemberRow[], decay: number): number {
  let sum = 0;
  let weight = 1;
  for (const row of rows) {
    sum += weight * row.score;
    weight *= decay;
  }
  return sum;
}

/** A group at a boundary: its score then, and its counted members not retracted since. */
interface GroupAt {
  item: string;
  score: number;
  counted: MemberRow[];
}

/**
 * The listing at `atSec` merged from the shards' parts: its best `listed` groups at the boundary, each
 * [group, score, counted members [item, score, ...]]. A group counts its best `top` members at the
 * boundary; a member retracted since keeps its place among them worth nothing (the ones after it
 * move up a weight, the next one does not move in) and the group keeps its row in the listing (a
 * group past the listing's rows does not move in), as an unsharded member board's retraction
 * rewrites a kept listing; a group left with no counted member leaves it.
 */
export function mergedGroups(shards: ShardParts[], atSec: number, rule: MergeRule & { listed: number }): MergedGroup[] {
  const byGroup = new Map<string, MemberRow[]>();
  for (const shard of shards) {
    const part = shard.parts.find((p) => p.atSec === atSec);
    for (const [group, flat] of part?.groups ?? [])
      byGroup.set(group, [...(byGroup.get(group) ?? []), ...rowsOf(flat)]);
  }
  const groups: GroupAt[] = [...byGroup].map(([group, rows]) => {
    const counted = rows.sort(boardOrder(rule.ascending)).slice(0, rule.top);
    return { item: group, score: weighed(counted, rule.decay), counted: counted.filter((row) => !row.retracted) };
  });
  return groups
    .sort(boardOrder(rule.ascending))
    .slice(0, rule.listed)
    .filter((group) => group.counted.length > 0)
    .map((group) => [
      group.item,
      String(weighed(group.counted, rule.decay)),
      group.counted.flatMap((row) => [row.item, row.text]),
    ]);
}

/** A merged listing's group: [group, score, counted members [item, score, ...]]. */
export type MergedGroup = [string, string, string[]];

/**
 * The merged listing in its kept order (its groups by their score now, as group_history_store sorts
 * them: the record's groups follow it) cut into pages of at most `rows` counted members, one group at
 * least (a group counts at most `top` of them); no group: one empty page (the merge's one call).
 */
export function listingPages(groups: MergedGroup[], ascending: boolean, rows: number): MergedGroup[][] {
  const order = boardOrder(ascending);
  const sorted = [...groups].sort((a, b) =>
    order({ item: a[0], score: Number(a[1]) }, { item: b[0], score: Number(b[1]) }),
  );
  const pages: MergedGroup[][] = [[]];
  let taken = 0;
  for (const group of sorted) {
    const members = group[2].length / 2;
    if (pages[pages.length - 1].length > 0 && taken + members > rows) {
      pages.push([]);
      taken = 0;
    }
    pages[pages.length - 1].push(group);
    taken += members;
  }
  return pages;
}
