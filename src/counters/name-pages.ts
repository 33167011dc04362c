/**
 * The first `depth` names, in byte order, of the union of several sorted lists (the counter index
 * buckets), reading about `depth` names in all instead of `depth` from each list. Names are spread over
 * the lists by a hash, so a list's share of the first `depth` is binomial: each list first sends its
 * share plus three standard deviations; the merge is exact up to the first list's last name that is not
 * the end of its list; while that is before the depth-th name, only such lists are asked again, for at
 * least as many names as they sent (a skewed list catches up in a few rounds). Pure: `fetch(list,
 * after, count)` reads `count` names after `after` ('' for the start) from one list, in byte order.
 */
export async function firstNames(
  lists: number,
  depth: number,
  after: string,
  fetch: (list: number, after: string, count: number) => Promise<string[]>,
): Promise<string[]> {
  const share = depth / lists;
  const firstAsk = Math.max(1, Math.ceil(share + 3 * Math.sqrt(share)));
  const read: string[][] = Array.from({ length: lists }, () => []);
  const done: boolean[] = Array.from({ length: lists }, () => false);
  let asks = Array.from({ length: lists }, (_, list) => ({ list, count: firstAsk }));
  for (;;) {
    await Promise.all(
      asks.map(async ({ list, count }) => {
        const names = await fetch(list, read[list].at(-1) ?? after, count);
        read[list].push(...names);
        if (names.length < count) done[list] = true;
      }),
    );
    const merged = read.flat().sort(byBytes);
    // Every name not read yet sorts after its list's last name read: the merge is exact up to the
    // earliest such last name of a list that may hold more.
    const open = read.flatMap((names, list) => (done[list] || names.length === 0 ? [] : [names[names.length - 1]]));
    const exactUpTo = open.sort(byBytes)[0];
    const exact = exactUpTo === undefined ? merged : merged.filter((name) => byBytes(name, exactUpTo) <= 0);
    if (exact.length >= depth || open.length === 0) return exact.slice(0, depth);
    const missing = depth - exact.length;
    asks = read.flatMap((names, list) =>
      done[list] || byBytes(names[names.length - 1], merged[depth - 1] ?? names[names.length - 1]) > 0
        ? []
        : [{ list, count: Math.max(names.length, Math.ceil(missing / open.length)) }],
    );
  }
}

/** Byte order of UTF-8 strings (Redis' lexicographic order). */
export function byBytes(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a), Buffer.from(b));
}
