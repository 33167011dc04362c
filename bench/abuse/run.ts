/**
 * `npm run abuse`: replays issue #22's hostile-client floods against private servers it starts itself
 * (each part: its own redis-server and the built service on free ports of 127.0.0.1, every flood
 * bounded to about 20 s) and prints one markdown table. Not part of `npm test`: it measures, and a
 * row whose defence did not hold makes the command exit 1. ABUSE_ONLY=streams,edge,... runs some parts.
 */
import { readdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { AbusePart, AbuseRow } from './abuse-part';

const NOT_PARTS = new Set(['abuse-part.ts', 'run.ts']);

/** Every exported function named `<part>Abuse` of the files beside this one. */
function partsOf(only: Set<string> | undefined): Array<[string, AbusePart]> {
  const parts: Array<[string, AbusePart]> = [];
  for (const file of readdirSync(__dirname).sort()) {
    if (!file.endsWith('.ts') || NOT_PARTS.has(file) || file.startsWith('_')) continue;
    const name = basename(file, '.ts');
    if (only && !only.has(name)) continue;
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- the parts are found at run time
    const exported = require(join(__dirname, file)) as Record<string, unknown>;
    for (const [exportName, value] of Object.entries(exported))
      if (exportName.endsWith('Abuse') && typeof value === 'function') parts.push([name, value as AbusePart]);
  }
  return parts;
}

async function main(): Promise<void> {
  const only = process.env.ABUSE_ONLY ? new Set(process.env.ABUSE_ONLY.split(',')) : undefined;
  const rows: Array<AbuseRow & { part: string }> = [];
  for (const [part, run] of partsOf(only)) {
    const started = Date.now();
    process.stderr.write(`abuse part ${part}…\n`);
    for (const row of await run()) rows.push({ part, ...row });
    process.stderr.write(`abuse part ${part} done in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
  }
  console.log('| part | attack | measured | held |');
  console.log('| --- | --- | --- | --- |');
  for (const row of rows)
    console.log(`| ${row.part} | ${row.attack} | ${row.measured} | ${row.held ? 'yes' : '**no**'} |`);
  if (rows.some((row) => !row.held)) process.exitCode = 1;
}

void main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
