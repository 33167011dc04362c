/**
 * Preloaded into each server by bench/process-instructions.ts (`node --expose-gc -r`): SIGUSR2 runs a
 * synchronous collection of the kind GC_TYPE names (`minor`: the young generation, a scavenge; `major`:
 * the whole heap) and then writes GC_DONE_FILE (whole, then renamed into place: the bench waits for the
 * name). A major collection of an idle server deoptimises the optimised code whose embedded weak
 * references (maps, constants) it finds dead, so the round after it pays the JIT again.
 */
import { renameSync, writeFileSync } from 'node:fs';

process.on('SIGUSR2', () => {
  if (typeof globalThis.gc !== 'function') throw new Error('gc-on-signal wants node --expose-gc');
  const type = process.env.GC_TYPE;
  if (type !== 'minor' && type !== 'major') throw new Error(`gc-on-signal: GC_TYPE ${type}, not minor or major`);
  // Node 26's gc({ type: 'major' }) scavenges (--trace-gc): only gc() with no argument marks and compacts.
  if (type === 'major') globalThis.gc();
  else globalThis.gc({ type, execution: 'sync' });
  const file = String(process.env.GC_DONE_FILE);
  writeFileSync(`${file}.part`, String(process.memoryUsage().heapUsed));
  renameSync(`${file}.part`, file);
});
