/**
 * Keys of bookkeeping a client's reads or an admin's steps make Redis hold, which no growth row's quota
 * stops (issue #45): each measured after the row making it (MEMORY USAGE) and held to the bound its
 * Lua library states, in entries, and in bytes at the most an entry of the harness's ids measured.
 */
import { ARCHIVE_TOP_ITEMS } from '../../src/ranking/options/calendar/calendar.limits';
import {
  MODERATED_GROUP_ITEMS_PER_SHARD,
  MODERATED_ITEMS_PER_SHARD,
  SPAN_STAGED_BYTES_PER_SHARD,
  SPAN_STAGED_ENTRIES_PER_READ,
  SPAN_STAGED_READS_PER_SHARD,
} from '../../src/ranking/core/ranking.limits';
import { BOARDS } from './boards';
import type { HeldKeys } from './harness-types';

/**
 * Most bytes an entry of these keys holds, its key's own overhead included: a member (or field) of the
 * harness's item ids (up to 5 characters) in a sorted set's skiplist and dict, or in segtext beside the
 * key name of its segment archive text. Measured 99 B (segheld, 10 000 entries), 116 B (segtext, 10 000
 * entries), 136 B (rtr, its one entry in a listpack); a longer id adds its bytes, up to ID_LENGTH_CHARS.
 */
const HELD_ENTRY_BYTES = 160;

const SEGMENT_ENTRIES = `one entry per item of the shard's segment archives Redis keeps (keep x top per calendar window and segment): one closed day of one segment, ${ARCHIVE_TOP_ITEMS.max} rows`;

/** archive_held_lib's segheld and segtext of wc-seggroups after its segment's closed day is written. */
export const SEGMENT_HELD: readonly HeldKeys[] = [
  {
    name: 'segheld',
    match: '*board:wc-seggroups*:segheld',
    mostEntries: () => ARCHIVE_TOP_ITEMS.max,
    why: SEGMENT_ENTRIES,
    bytesPerEntry: HELD_ENTRY_BYTES,
  },
  {
    name: 'segtext',
    match: '*board:wc-seggroups*:segtext',
    mostEntries: () => ARCHIVE_TOP_ITEMS.max,
    why: SEGMENT_ENTRIES,
    bytesPerEntry: HELD_ENTRY_BYTES,
  },
];

/**
 * group_parts_lib's retractions noted on shard 0 of the sharded group board (<base>rtr) after one item
 * retraction: one entry per item retracted within its last hour (RETRACTIONS_KEPT_MS: each note drops
 * older ones, and the key expires an hour after the last).
 */
export const RETRACTIONS_NOTED: readonly HeldKeys[] = [
  {
    name: 'rtr',
    match: '*%wc-teams-sharded:rtr',
    mostEntries: () => 1,
    why: 'one entry per item retracted within the last hour (RETRACTIONS_KEPT_MS): the row retracts one',
    bytesPerEntry: HELD_ENTRY_BYTES,
  },
];

/** wc-modgroups' windows, read when measured: boards.ts imports the rows that import these. */
const moderatedWindows = () => BOARDS['wc-modgroups'].windows.length;

/**
 * moderation_count_lib's index of the hidden items' scores in each window of wc-modgroups (exheld) and the shard's
 * list of the windows holding one (exidx), after a mid-table write built them: kept from call to call, dropped
 * whenever the shard's exceptions change, with their window and with the board.
 */
export const MODERATION_INDEXES: readonly HeldKeys[] = [
  {
    name: 'exheld',
    match: '*board:wc-modgroups*:exheld',
    mostEntries: () => moderatedWindows() * (MODERATED_ITEMS_PER_SHARD + MODERATED_GROUP_ITEMS_PER_SHARD),
    why: "one entry per hidden item a window holds, in each window: the shard's item states and its hidden groups' items",
    bytesPerEntry: HELD_ENTRY_BYTES,
  },
  {
    name: 'exidx',
    match: '*board:wc-modgroups*:exidx',
    mostEntries: moderatedWindows,
    why: 'one entry per window (and segment) whose index is built',
    bytesPerEntry: HELD_ENTRY_BYTES,
  },
];

/** The entries of a shard window's staged span reads at their most. */
const STAGED_ENTRIES = SPAN_STAGED_READS_PER_SHARD * SPAN_STAGED_ENTRIES_PER_READ;

/**
 * span_stage's keys on wc-spanactors' window after as many filtered span reads as it holds at once, each
 * of an instance that stopped once its span was staged: what they hold stays until SPAN_STAGE_TTL_MS
 * (staged), and the window's registry of them refuses one more (staged reads).
 */
export const STAGED_SPANS: readonly HeldKeys[] = [
  {
    name: 'staged',
    match: '*board:wc-spanactors*:staged:*',
    mostEntries: () => STAGED_ENTRIES,
    why: `SPAN_STAGED_READS_PER_SHARD reads of SPAN_STAGED_ENTRIES_PER_READ entries: SPAN_STAGED_BYTES_PER_SHARD (${SPAN_STAGED_BYTES_PER_SHARD} B)`,
    bytesPerEntry: SPAN_STAGED_BYTES_PER_SHARD / STAGED_ENTRIES,
  },
  {
    name: 'staged reads',
    match: '*board:wc-spanactors*:staged',
    mostEntries: () => SPAN_STAGED_READS_PER_SHARD,
    why: 'one entry per staged read of the window (SPAN_STAGED_READS_PER_SHARD)',
    bytesPerEntry: HELD_ENTRY_BYTES,
  },
];
