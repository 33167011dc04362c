import { join } from 'node:path';
import { ScriptDefinition } from '../redis/scripts';

const dir = join(__dirname, 'scripts');

/** Every counters script (see the header of each .lua file for KEYS, ARGV and reply). */
export const COUNTER_SCRIPTS = {
  increment: { name: 'tbCounterIncrement', file: join(dir, 'increment.lua'), numberOfKeys: 'dynamic' },
  read: { name: 'tbCounterRead', file: join(dir, 'read.lua'), numberOfKeys: 2 },
  delete: { name: 'tbCounterDelete', file: join(dir, 'delete.lua'), numberOfKeys: 'dynamic' },
  clean: { name: 'tbCounterClean', file: join(dir, 'clean.lua'), numberOfKeys: 1 },
} satisfies Record<string, ScriptDefinition>;
