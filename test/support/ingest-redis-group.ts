import Redis, { Cluster } from 'ioredis';

/** The fault tests' view of a Redis stream source's consumer group (the group `trendboard`). */

/** A Redis source's group set back: the messages from `ids[from]` on are delivered again. */
export async function rewindGroup(client: Redis | Cluster, stream: string, from: number, ids: string[]): Promise<void> {
  await client.xgroup('SETID', stream, 'trendboard', ids[from - 1], 'ENTRIESREAD', from);
}

/** A Redis source's group and its consumers, as XINFO answers them. */
export async function groupState(client: Redis | Cluster, stream: string): Promise<unknown> {
  const info = (await client.xinfo('STREAM', stream)) as unknown[];
  return {
    length: await client.xlen(stream),
    lastGenerated: info[info.indexOf('last-generated-id') + 1],
    groups: await client.xinfo('GROUPS', stream),
    consumers: await client.xinfo('CONSUMERS', stream, 'trendboard'),
  };
}

/**
 * True when a Redis source's group holds nothing undelivered or pending: its last delivered id is the
 * stream's last entry's and nothing is pending. Not its `lag`: Redis counts that from the entries the
 * group has read, which can fall behind for good across the test's restart of Redis.
 */
export async function groupDrained(client: Redis | Cluster, stream: string): Promise<boolean> {
  const info = (await client.xinfo('STREAM', stream)) as unknown[];
  const groups = (await client.xinfo('GROUPS', stream)) as unknown[][];
  const group = Object.fromEntries(
    Array.from({ length: groups[0].length / 2 }, (_, i) => [groups[0][2 * i], groups[0][2 * i + 1]]),
  );
  return group['last-delivered-id'] === info[info.indexOf('last-generated-id') + 1] && group.pending === 0;
}
