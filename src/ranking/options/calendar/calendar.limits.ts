import type { Bounds } from '../../../common/limits';

/** A calendar window's archive: closed periods kept, and rows of each period's final standings. */
export const ARCHIVE_KEEP: Bounds = { min: 1, max: 1000 };
export const ARCHIVE_TOP_ITEMS: Bounds = { min: 1, max: 10_000 };
/** Archives per page of GET /boards/:board/archives (each up to `top` rows). */
export const ARCHIVE_PAGE: Bounds = { min: 1, max: 100 };
export const DEFAULT_ARCHIVE_PAGE = 10;
/** Rows of each period GET /boards/:board/archives answers (`items`; default: the archive's `top`). */
export const ARCHIVE_PERIOD_ROWS: Bounds = { min: 1, max: 10_000 };
/**
 * Rows all shards together answer one archive read (each shard of a sharded board answers its rows
 * from the top down to the page's end): an archives page holds fewer periods, or fewer rows of each,
 * rather than more (`nextCursor`, `nextOffset`); an archive page deeper than it on a sharded board is
 * refused (422 REQUEST_TOO_COSTLY). About 1 ms of Redis per 10 000 rows cut (docs/security.md).
 */
export const ARCHIVE_ROWS_PER_READ = 20_000;
/**
 * Rows one archive read call of a one-shard board answers at most: a read of more (an archives page of
 * periods of 10 000 rows) goes in calls of at most this many rows of one period each, each past the
 * first a read of the client's budget (archives.store.ts inCalls). A call copies its period's text and
 * cuts its rows out: Redis' Lua hashes every byte of a string it makes, so a call answering 2 periods
 * of 10 000 rows, 200 of them hidden, cost 31 M instructions, one of 5 000 rows about a quarter.
 */
export const ARCHIVE_ROWS_PER_CALL = 5000;
/**
 * Rows of archived periods' texts one archive read call passes over for the positions of the rows
 * moderation leaves out now, per expired-slot field of its drain budget (EXPIRE_CHUNK): at the default
 * 100, 2 500 rows a call (archive_read.lua's steps, ~0.3 µs of Redis a row). A deep page of a one-shard
 * board read first after a moderation change waits for the pass over its period in as many calls.
 */
export const ARCHIVE_INDEX_ROWS_PER_CHUNK_FIELD = 25;
/**
 * Calls one archive read makes while a period's pass has not reached its page (each a read of the
 * client's budget): enough, with ARCHIVE_ROWS_PER_READ rows asked, for every row each call passes over.
 */
export const archiveIndexCalls = (indexRowsPerCall: number) =>
  Math.ceil(ARCHIVE_ROWS_PER_READ / Math.max(1, indexRowsPerCall)) + 1;
/** Archives one read of an item retraction's cut of a sharded board's archives takes (each up to `top` rows per shard). */
export const ARCHIVES_PER_CUT_READ = 10;

/** Why a calendar window, its archive or an archive read is refused. */
export const CALENDAR_MESSAGES = {
  calendarWithSpan: (field: string) =>
    `${field}: a calendar window takes no period or interval (its periods come from the calendar)`,
  unknownTimeZone: (field: string, zone: string) =>
    `${field}.timeZone "${zone}" is not a known IANA time zone (like "Europe/Berlin", "America/New_York", "UTC")`,
  calendarOnly: (field: string, key: string) => `${field}.${key} applies to calendar windows only`,
  weekStartOffWeek: (field: string) => `${field}.weekStart applies to calendar "week" windows only`,
  snapshotsOnCalendar: (field: string) =>
    `${field}: a calendar window keeps archives ("archive": { "keep", "top" }), not snapshots`,
  notOnCalendar: (field: string, key: string) => `${field}.${key} does not apply to calendar windows`,
  notCalendar: (board: string, window: string) =>
    `window "${window}" of board "${board}" is not a calendar window (archives are kept by calendar windows)`,
  calendarKeepsArchives: (board: string, window: string) =>
    `window "${window}" of board "${board}" is a calendar window: read its closed periods with GET /boards/${board}/archive?window=${window}`,
  keepsNoArchive: (board: string, window: string) =>
    `window "${window}" of board "${board}" keeps no archive (give it "archive": { "keep", "top" })`,
  noArchive: (board: string, window: string, atSec: number | undefined) =>
    atSec === undefined
      ? `window "${window}" of board "${board}" has no archive yet (one is kept at each period end)`
      : `window "${window}" of board "${board}" keeps no archive of the period holding ${atSec}`,
  atInClosedPeriod: (field: string, fromSec: number, toSec: number, atSec: number) =>
    `${field} ${atSec} lies in the closed period ${fromSec}..${toSec} of every window (a calendar period takes events only while it is open)`,
  archiveTooDeep: (shards: number, end: number, most: number) =>
    `an archive page ending at row ${end} of this board of ${shards} shards reads ${shards * end} rows, more than the ${most} one read may: ask for rows above ${Math.floor(most / shards)} (offset + limit)`,
  moderatedArchiveTooDeep: (end: number, most: number) =>
    `the rows of this sharded board's archive down to row ${end} shown lie past the ${most} rows one read may answer (moderation leaves out many rows of one shard ahead of them): ask for rows above ${end} (offset + limit, or items)`,
  archiveIndexing: (board: string, calls: number) =>
    `board "${board}": the positions of the archived rows moderation leaves out are still being found after ${calls} calls (a moderation change or a retraction came in between); retry in a moment, the next read goes on from there`,
  archiveChanged: (board: string, attempts: number) =>
    `board "${board}": the archive changed while it was read in several calls, ${attempts} times (a retraction or a moderation change came in between); retry`,
};
