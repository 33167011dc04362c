/**
 * `node test/support/file-seconds.mjs <cost file>` writes test/support/file-seconds.json, the order
 * cost-sequencer.mjs gives a cold Jest cache, from the lines a TEST_COST_FILE run wrote (file-cost.ts):
 * each file's wall seconds, longest first. A file's last line counts (a file run again replaces it).
 */
import { readFileSync, writeFileSync } from 'node:fs';

const [costFile] = process.argv.slice(2);
if (!costFile) throw new Error('usage: node test/support/file-seconds.mjs <TEST_COST_FILE output>');
const seconds = new Map();
for (const line of readFileSync(costFile, 'utf8').split('\n').filter(Boolean)) {
  const { file, wallSec } = JSON.parse(line);
  seconds.set(file, Math.max(1, Math.round(wallSec)));
}
const table = Object.fromEntries([...seconds].sort(([a, x], [b, y]) => y - x || (a < b ? -1 : 1)));
writeFileSync(new URL('./file-seconds.json', import.meta.url), `${JSON.stringify(table, null, 2)}\n`);
