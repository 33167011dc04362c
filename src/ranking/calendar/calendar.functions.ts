import { functionSet } from '../../redis/function-library';
import type { ScoredItem } from '../core/ranking.types';
import { windowReadFunction, WindowCall } from '../core/script-call';
import { parseSnapshotRows } from '../history/history.functions';
import { sliceFunctions } from '../core/slice-functions';

/** Rows of one archived period as one shard answered them: a page of its final standings. */
export interface ArchivePage {
  /** The period's start (unix s). */
  atSec: number;
  rows: ScoredItem[];
  /** Rows of the period before the first answered (0 on a sharded board: each shard answers from its top). */
  skipped: number;
  /** Rows ranked strictly ahead of the first answered: its competition rank - 1. */
  ahead: number;
  /**
   * Whether the shard holds rows after these (on a moderated sharded board: that it stopped at its
   * most rows before its page's end, so rows nobody read follow).
   */
  more: boolean;
  /**
   * When rows follow, the page's last row as stored ('' otherwise; a merged page: ''): the next call of
   * a one-shard read of the period in several answers its page only while that row is still where
   * this page ended (ArchiveRows.seam).
   */
  seam: string;
}

/** One shard's archives of a window. */
export interface ArchiveReadReply {
  keeps: boolean;
  /** An archive of a closed period is still being taken in chunks (archive_lib.lua): not listed yet. */
  draining: boolean;
  /**
   * A period's pass for the positions of the rows left out now (shownPage) has not reached its page:
   * that period is not answered; the next call goes on from where this one stopped.
   */
  indexing: boolean;
  kept: number[];
  archives: ArchivePage[];
  /**
   * On a moderated board, the items of the rows answered that the listing leaves out now (each period
   * answered from its top through its (skip + most + 1)-th row shown); null on another board, and when
   * the read asked for the shown page (`shownPage`: the shard left them out and ranked the rest itself).
   */
  leftOut: string[] | null;
}

/** Which rows of each period an archive read answers: `skip` best rows left out, then at most `most`. */
export interface ArchiveRows {
  skip: number;
  most: number;
  /** A later call of one period's read in several: the seam the page before answered (archive_read.lua). */
  seam?: string;
}

/** An archived period as a shard answers it (archive_read.lua): its start, a page of its rows, skipped, ahead, more, seam. */
const ARCHIVE_PAGE = ['at', 'rows', 'skipped', 'ahead', 'more', 'seam'] as const;
const ARCHIVE_ARGS = [
  'latest_sec',
  'most_periods',
  'skip_rows',
  'most_rows',
  'shown_page',
  'shard_rows',
  'index_rows',
  'seam',
] as const;
const ARCHIVE_REPLY = ['keeps', 'draining', 'indexing', 'kept', 'periods', 'moderated', 'left_out'] as const;

/** Calendar windows' archives: each closed period's final standings, as one shard stored them. */
export const CALENDAR_FUNCTIONS = functionSet('tbRank', {
  archiveRead: windowReadFunction({
    args: ARCHIVE_ARGS,
    reply: ARCHIVE_REPLY,
    values: (
      call: WindowCall & {
        latestSec: number | undefined;
        most: number;
        rows: ArchiveRows;
        shownPage: boolean;
        shardRows: number;
        indexRows: number;
      },
    ) => ({
      latest_sec: call.latestSec,
      most_periods: call.most,
      skip_rows: call.rows.skip,
      most_rows: call.rows.most,
      shown_page: call.shownPage ? 1 : 0,
      shard_rows: call.shardRows,
      index_rows: call.indexRows,
      seam: call.rows.seam ?? '',
    }),
    /**
     * keeps: the window keeps archives; draining: an archive of this shard is still being taken; kept:
     * the start of every period this shard keeps; archives newest first, a page of rows each
     */
    decode: (reply): ArchiveReadReply => {
      const leftOut = reply.nested('left_out');
      return {
        keeps: reply.flag('keeps'),
        draining: reply.flag('draining'),
        indexing: reply.flag('indexing'),
        leftOut: reply.flag('moderated') ? leftOut.strings() : null,
        kept: reply.nested('kept').intsFrom(0),
        archives: reply
          .nested('periods')
          .records(ARCHIVE_PAGE)
          .map((page) => ({
            atSec: page.int('at'),
            rows: parseSnapshotRows(page.string('rows')),
            skipped: page.int('skipped'),
            ahead: page.int('ahead'),
            more: page.flag('more'),
            seam: page.string('seam'),
          })),
      };
    },
  }),
});

/** The calendar slice's part of tb_ranking, injected into its store (RankingCoreModule builds it). */
export class CalendarFunctions extends sliceFunctions(CALENDAR_FUNCTIONS) {}
