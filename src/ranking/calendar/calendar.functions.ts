import { Reply } from '../../redis/replies';
import { typedFunction } from '../../redis/function-library';
import { WindowCall, windowRead } from '../core/script-call';
import { parseSnapshotRows, StoredSnapshot } from '../history/history.functions';

/** Calendar windows' archives: each closed period's final standings, as one shard stored them. */
export const CALENDAR_FUNCTIONS = {
  archiveRead: typedFunction({
    name: 'tbRankArchiveRead',
    handler: 'archive_read',
    flags: ['allow-oom'],
    numberOfKeys: 3,
    build: (call: WindowCall & { latestSec: number | undefined; most: number }) =>
      windowRead(call, [call.latestSec ?? '', call.most]),
    /** keeps: the window keeps archives; archives newest first, atSec each period's start */
    decode: (raw): { keeps: boolean; archives: StoredSnapshot[] } => {
      const reply = new Reply('tbRankArchiveRead', raw).expectLength(1, true);
      if (reply.length % 2 !== 1) throw reply.unexpected(reply.length - 1, 'pairs of period start, rows');
      return {
        keeps: reply.flag(0),
        archives: Array.from({ length: (reply.length - 1) / 2 }, (_, i) => ({
          atSec: reply.int(1 + 2 * i),
          rows: parseSnapshotRows(reply.string(2 + 2 * i)),
        })),
      };
    },
  }),
};
