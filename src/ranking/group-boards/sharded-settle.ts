/**
 * A group board over a sharded member board: each shard keeps its own items' group zsets, dirty marks
 * and generations (group_of_lib.lua), shard 0 the groups' scores. A settle round names the shards'
 * dirty groups (one call a shard, in parallel), claims a batch of them on shard 0, reads each shard's
 * best `top` members of the batch in the member board's order, those its moderation hides left out
 * (one call a shard: group_of_lib), merges them here, stores the scores still claimed on shard 0 and
 * clears, on each shard, the marks whose generation is the one it read (with the next naming of dirty
 * groups): a mark is gone only once a stored score counts that shard's rows.
 */
/** One shard's rows of a batch: per group, its generation and [member, score, ...] best first. */
export type ShardRows = Array<[string, string[]]>;

/** Groups one round settles: at most `rows` member rows a shard call (GROUP_SETTLE_ROWS), and as many entries a store. */
export function batchSize(top: number, shards: number, rows: number): number {
  return Math.max(1, Math.floor(rows / Math.max(top, shards)));
}

/** The batch: the first `size` distinct groups the shards named dirty. */
export function batchOf(dirty: string[][], size: number): string[] {
  return [...new Set(dirty.flat())].slice(0, size);
}

/** How a group's score is made: its `top` best members (the lowest first when `ascending`), weighed decay^i. */
export interface MergeRule {
  top: number;
  decay: number;
  ascending: boolean;
}

/** Σ decay^i · s_i over the best `top` of every shard's rows of the group at `index` ("" when none). */
export function mergedScore(shards: ShardRows[], index: number, rule: MergeRule): string {
  const { top, decay, ascending } = rule;
  const scores: number[] = [];
  for (const rows of shards) {
    const members = rows[index][1];
    for (let i = 1; i < members.length; i += 2) scores.push(Number(members[i]));
  }
  if (scores.length === 0) return '';
  scores.sort((a, b) => (ascending ? a - b : b - a));
  let sum = 0;
  let weight = 1;
  for (const score of scores.slice(0, top)) {
    sum += weight * score;
    weight *= decay;
  }
  return String(sum);
}

/** Each shard's clears of the stored groups: group, the generation the shard answered, flattened. */
export function clearsOf(batch: string[], stored: string[], shards: ShardRows[]): string[][] {
  const kept = new Set(stored);
  return shards.map((rows) => batch.flatMap((group, i) => (kept.has(group) ? [group, rows[i][0]] : [])));
}
