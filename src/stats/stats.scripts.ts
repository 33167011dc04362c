import { join } from 'node:path';
import { ScriptDefinition } from '../redis/scripts';

const dir = join(__dirname, 'scripts');
const lib = [join(dir, 'stats_lib.lua')];

/** Every stats script; the writers get the shared hour/merge library prepended. */
export const STATS_SCRIPTS = {
  record: { name: 'tbStatsRecord', file: join(dir, 'record.lua'), libraries: lib, numberOfKeys: 2 },
  merge: { name: 'tbStatsMerge', file: join(dir, 'merge.lua'), libraries: lib, numberOfKeys: 2 },
  read: { name: 'tbStatsRead', file: join(dir, 'read.lua'), numberOfKeys: 2 },
} satisfies Record<string, ScriptDefinition>;
