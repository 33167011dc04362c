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
 * counts events one by one (a retraction reports them), as an HTTP increment with that actor records it. Groups come in the order of their last event: an item's score in each window is
 * last set by the group holding its last event, after every item whose last event came before, so
 * `ties: first` ranks them as adding event by event would. A group's time is its earliest event's
 * (a hot view's firstSeen); amounts of opposite signs sum within a group, so a score that would pass
 * through 0 inside one batch is not seen at 0 (final scores are the same).
 */
export function groupsOf(entries: IngestEntry[]): SummedPart {
  const groups = new Map<string, IngestGroup>();
  entries.forEach((entry, index) => {
    const segments = entry.segments?.join(',') ?? '';
    // No newline in it, so no (item, second, segments) key equals it: a group no other entry shares.
    const key = entry.actor ? `#${index}` : `${entry.item}\n${Math.floor(entry.atMs / 1000)}\n${segments}`;
    const group = groups.get(key);
    // Deleted and set again: a Map iterates in insertion order, so the group moves to the end.
    if (group) {
      groups.delete(key);
      group.amount += entry.amount;
      group.atMs = Math.min(group.atMs, entry.atMs);
    }
    groups.set(key, group ?? groupOf(entry));
  });
  return {
    firstId: entries[0].id,
    lastId: entries[entries.length - 1].id,
    events: entries.length,
    groups: [...groups.values()],
  };
}

function groupOf(entry: IngestEntry): IngestGroup {
  const group: IngestGroup = { item: entry.item, amount: entry.amount, atMs: entry.atMs, segments: entry.segments };
  if (entry.actor) group.actor = entry.actor;
  return group;
}
