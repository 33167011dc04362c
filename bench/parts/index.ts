/**
 * Every benchmark of bench/, each a named part (src/craft-outside.spec.ts holds that no file under
 * bench/ runs on its own and that each is reached from here); `npm run bench -- --list` prints them.
 */
import { ABUSE_PARTS } from './abuse';
import { BOARD_OPTIONS_PARTS } from './board-options';
import { HOT_PATH_PARTS } from './hot-path';
import { INSTRUCTIONS_PARTS } from './instructions';
import type { BenchPart } from './part';
import { RANKING_FUNCTIONS_PARTS } from './ranking-functions';
import { READS_PARTS } from './reads';
import { SCALE_OUT_PARTS } from './scale-out';

export const PARTS: readonly BenchPart[] = [
  ...HOT_PATH_PARTS,
  ...RANKING_FUNCTIONS_PARTS,
  ...READS_PARTS,
  ...BOARD_OPTIONS_PARTS,
  ...SCALE_OUT_PARTS,
  ...INSTRUCTIONS_PARTS,
  ...ABUSE_PARTS,
];
