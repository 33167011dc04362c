/**
 * Preloaded into a server by bench/allocations.ts (`-r`): V8's sampling heap profiler, counting the
 * objects scavenges and full collections took as well, so a profile holds every allocation of its span,
 * not only what survived it. SIGUSR2 starts a span; SIGUSR1 ends it and writes the profile to
 * HEAP_SAMPLES_FILE (written whole, then renamed into place: the bench waits for the name).
 */
import { renameSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';

/** Bytes between samples: small enough for a few thousand requests to give each frame many samples. */
const SAMPLING_INTERVAL_BYTES = 512;

const session = new Session();
session.connect();
process.on('SIGUSR2', () => {
  session.post('HeapProfiler.startSampling', {
    samplingInterval: SAMPLING_INTERVAL_BYTES,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  });
});
process.on('SIGUSR1', () => {
  session.post('HeapProfiler.stopSampling', (error, result) => {
    const file = String(process.env.HEAP_SAMPLES_FILE);
    writeFileSync(`${file}.part`, error ? JSON.stringify({ error: String(error) }) : JSON.stringify(result.profile));
    renameSync(`${file}.part`, file);
  });
});
