/**
 * Jest's test order, with the seconds of test/support/file-seconds.json for the files its own cache
 * has not timed. Jest starts the longest files first, so that its workers end together, but it knows a
 * file's time only from earlier runs on the same machine; on CI's cold cache it goes by file size, and
 * the longest files (the e2e files that gather parts: 15 lines, about 40 s; the
 * ingest fault tests: 100 lines, 20-30 s) started wherever their size put them.
 * `node test/support/file-seconds.mjs <TEST_COST_FILE output>` writes the table again (file-cost.ts).
 */
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import JestSequencer from '@jest/test-sequencer';

const SECONDS = JSON.parse(readFileSync(new URL('./file-seconds.json', import.meta.url), 'utf8'));

export default class CostSequencer extends JestSequencer {
  /** Jest's time of the file (ms) when its cache has one, else the table's. */
  time(test) {
    const cached = super.time(test);
    if (cached !== undefined) return cached;
    const seconds = SECONDS[relative(test.context.config.rootDir, test.path)];
    return seconds === undefined ? undefined : seconds * 1000;
  }
}
