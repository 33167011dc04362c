import type { IngestEntry, IngestGroup } from './ingest.functions';

/** A batch part as ingest_groups takes it: its events summed per group, its first and last ids. */
export interface SummedPart {
  firstId: string;
  lastId: string;
  events: number;
  groups: IngestGroup[];
}

/**
 * Sums a part's entries (ids ascending) per (item, second, segments): one write per group instead of
 * one per event. An entry with an actor stays a group of its own: its actor's contribution in a slot
 * counts events one by one (a retraction reports them), as an HTTP increment with that actor records it.
 * Groups come in the order of their last event: an item's score in each window is
 * last set by the group holding its last event, after every item whose last event came before, so
 * `ties: first` ranks them as adding event by event would. A group's time is its earliest event's
 * (a hot view's firstSeen); amounts of opposite signs sum within a group, so a score that would pass
 * through 0 inside one batch is not seen at 0 (final scores are the same).
 */
export function groupsOf(entries: IngestEntry[]): SummedPart {
  const at = new Map<string, number>();
  const groups: IngestGroup[] = [];
  /** Per group, the index of its last entry: the order they go in. */
  const lasts: number[] = [];
  let merged = false;
  for (let index = 0; index < entries.length; index++) {
    const entry = entries[index];
    // No newline in an item, so no two (item, second, segments) share a key; an actor's entry has none.
    const key = entry.actor
      ? undefined
      : `${entry.item}\n${Math.floor(entry.atMs / 1000)}\n${entry.segments?.join(',') ?? ''}`;
    const position = key === undefined ? undefined : at.get(key);
    if (position === undefined) {
      if (key !== undefined) at.set(key, groups.length);
      groups.push(groupOf(entry));
      lasts.push(index);
    } else {
      const group = groups[position];
      group.amount += entry.amount;
      group.atMs = Math.min(group.atMs, entry.atMs);
      lasts[position] = index;
      merged = true;
    }
  }
  return {
    firstId: entries[0].id,
    lastId: entries[entries.length - 1].id,
    events: entries.length,
    // Without a merge, each group's last entry is its only one: already in order.
    groups: merged ? byLastEntry(groups, lasts) : groups,
  };
}

/** The groups in the order of their last entries (`lasts`, distinct indexes). */
function byLastEntry(groups: IngestGroup[], lasts: number[]): IngestGroup[] {
  const order = groups.map((_, position) => position).sort((a, b) => lasts[a] - lasts[b]);
  return order.map((position) => groups[position]);
}

function groupOf(entry: IngestEntry): IngestGroup {
  const group: IngestGroup = { item: entry.item, amount: entry.amount, atMs: entry.atMs, segments: entry.segments };
  if (entry.actor) group.actor = entry.actor;
  return group;
}
