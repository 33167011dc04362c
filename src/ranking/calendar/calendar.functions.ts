import { Reply } from '../../redis/replies';
import { typedFunction } from '../../redis/function-library';
import { WindowCall, windowRead } from '../core/script-call';
import { parseSnapshotRows, StoredSnapshot } from '../history/history.functions';

/** One shard's archives of a window. */
export interface ArchiveReadReply {
  keeps: boolean;
  /** An archive of a closed period is still being taken in chunks (archive_lib.lua): not listed yet. */
  draining: boolean;
  kept: number[];
  archives: StoredSnapshot[];
}

/** Calendar windows' archives: each closed period's final standings, as one shard stored them. */
export const CALENDAR_FUNCTIONS = {
  archiveRead: typedFunction({
    name: 'tbRankArchiveRead',
    handler: 'archive_read',
    flags: ['allow-oom'],
    numberOfKeys: 3,
    build: (call: WindowCall & { latestSec: number | undefined; most: number }) =>
      windowRead(call, [call.latestSec ?? '', call.most]),
    /**
     * keeps: the window keeps archives; draining: an archive of this shard is still being taken; kept:
     * the start of every period this shard keeps; archives newest first, atSec each period's start
     */
    decode: (raw): ArchiveReadReply => {
      const reply = new Reply('tbRankArchiveRead', raw).expectLength(1, true);
      if (reply.length === 1) return { keeps: reply.flag(0), draining: false, kept: [], archives: [] };
      if (reply.length % 2 !== 1) throw reply.unexpected(reply.length - 1, 'pairs of period start, rows');
      return {
        keeps: reply.flag(0),
        draining: reply.flag(1),
        kept: reply.nested(2).intsFrom(0),
        archives: Array.from({ length: (reply.length - 3) / 2 }, (_, i) => ({
          atSec: reply.int(3 + 2 * i),
          rows: parseSnapshotRows(reply.string(4 + 2 * i)),
        })),
      };
    },
  }),
};
