import { BOARDS_SCRIPTS } from '../src/ranking/boards/boards.scripts';
import { EXPIRY_SCRIPTS } from '../src/ranking/expiry/expiry.scripts';
import { HISTORY_SCRIPTS } from '../src/ranking/history/history.scripts';
import { READS_SCRIPTS } from '../src/ranking/reads/reads.scripts';
import { SHARDS_SCRIPTS } from '../src/ranking/shards/shards.scripts';
import { VIEWS_SCRIPTS } from '../src/ranking/views/views.scripts';
import { WRITES_SCRIPTS } from '../src/ranking/writes/writes.scripts';

/** Every ranking slice's scripts in one table, for the benchmarks that call scripts without the service. */
export const RANKING_SCRIPTS = {
  ...BOARDS_SCRIPTS,
  ...SHARDS_SCRIPTS,
  ...HISTORY_SCRIPTS,
  ...READS_SCRIPTS,
  ...VIEWS_SCRIPTS,
  ...WRITES_SCRIPTS,
  ...EXPIRY_SCRIPTS,
};
