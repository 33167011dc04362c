import type { ListingPart } from './group-boards.functions';
import { knownBoundaries, listingPages, mergedGroups, type MergedGroup, ShardParts } from './group-history';

const part = (atSec: number, groups: ListingPart['groups'] = [], over = false, quiet = false): ListingPart => ({
  atSec,
  over,
  groups,
  quiet,
});
const RULE = { top: 2, decay: 0.5, ascending: false, listed: 2 };

describe('knownBoundaries: the boundaries whose listing the shards’ parts make known', () => {
  it('a rolling boundary needs every shard’s part, but of shards that held no member then', () => {
    const shards: ShardParts[] = [
      { parts: [part(20), part(40), part(60)], since: 0 },
      // Quiet through 40: its listing there is not known.
      { parts: [part(20), part(60)], since: 0 },
      // No member before its first membership change in the slot starting at 40.
      { parts: [part(60)], since: 40 },
      { parts: [], since: -1 },
    ];
    expect(knownBoundaries(shards, false)).toEqual([20, 60]);
  });

  it('a rolling boundary where every shard was quiet (no call in the slot it ends) keeps no listing', () => {
    const quiet = (atSec: number) => part(atSec, [], false, true);
    const shards: ShardParts[] = [
      { parts: [part(20), quiet(40), quiet(60)], since: 0 },
      { parts: [quiet(20), part(40), quiet(60)], since: 0 },
    ];
    expect(knownBoundaries(shards, false)).toEqual([20, 40]);
  });

  it('a calendar period is known from the shards that wrote in it; a part over its room keeps none', () => {
    const shards: ShardParts[] = [
      { parts: [part(0), part(86_400, [], true)], since: 0 },
      { parts: [part(86_400)], since: 0 },
    ];
    expect(knownBoundaries(shards, true)).toEqual([0]);
  });
});

describe('mergedGroups: a listing from the shards’ parts', () => {
  /** A shard holding members from the start whose one part is at 20 s. */
  const shardAt20 = (groups: ListingPart['groups']): ShardParts => ({ parts: [part(20, groups)], since: 0 });
  const shards: ShardParts[] = [
    shardAt20([
      ['red', ['a', '5', 0, 'c', '3', 1]],
      ['blue', ['x', '4', 0]],
    ]),
    shardAt20([
      ['red', ['b', '4', 0, 'd', '1', 0]],
      ['green', ['y', '2', 0]],
    ]),
  ];

  it('counts each group’s best `top` members over every shard, a retracted one in its place worth nothing', () => {
    // red counts a 5 and b 4 (c 3 and d 1 are past its top); blue x 4; green is past the listing's 2 rows.
    expect(mergedGroups(shards, 20, RULE)).toEqual([
      ['red', String(5 + 0.5 * 4), ['a', '5', 'b', '4']],
      ['blue', '4', ['x', '4']],
    ]);
  });

  it('lets no member move in past a retracted one, nor a group past the listing', () => {
    const retracted: ShardParts[] = [
      shardAt20([
        ['red', ['a', '5', 1, 'c', '3', 0]],
        ['blue', ['x', '4', 0]],
      ]),
      shards[1],
    ];
    expect(mergedGroups(retracted, 20, RULE)).toEqual([
      ['red', '4', ['b', '4']],
      ['blue', '4', ['x', '4']],
    ]);
  });
});

describe('listingPages: a merged listing in the pages of its record', () => {
  const group = (name: string, score: string, members: number): MergedGroup => [
    name,
    score,
    Array.from({ length: members }, (_, k) => [`${name}${k}`, '1']).flat(),
  ];

  it('orders the groups by their score now (ties by id bytes) and cuts whole groups at the page’s rows', () => {
    const groups = [group('a', '4', 2), group('c', '9', 3), group('b', '4', 1), group('d', '1', 5)];
    const pages = listingPages(groups, false, 4);
    expect(pages.map((page) => page.map(([name]) => name))).toEqual([['c', 'b'], ['a'], ['d']]);
    expect(listingPages(groups, true, 100).map((page) => page.map(([name]) => name))).toEqual([['d', 'a', 'b', 'c']]);
  });

  it('answers one empty page for a listing of no group (its merge still keeps it)', () => {
    expect(listingPages([], false, 4)).toEqual([[]]);
  });
});
