/**
 * Preloaded into each server by bench/process-instructions.ts (`node --expose-gc -r`): SIGUSR2 runs a
 * full, synchronous collection and then writes GC_DONE_FILE (whole, then renamed into place: the bench
 * waits for the name), so every counted round starts with no garbage left by the round before it.
 */
import { renameSync, writeFileSync } from 'node:fs';

process.on('SIGUSR2', () => {
  if (typeof globalThis.gc !== 'function') throw new Error('gc-on-signal wants node --expose-gc');
  globalThis.gc();
  const file = String(process.env.GC_DONE_FILE);
  writeFileSync(`${file}.part`, String(process.memoryUsage().heapUsed));
  renameSync(`${file}.part`, file);
});
