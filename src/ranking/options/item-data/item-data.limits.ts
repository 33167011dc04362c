/** Most bytes (UTF-8) of one item's data, serialized as JSON. */
export const ITEM_DATA_BYTES = 1024;

/** Why an item's data is refused. */
export const ITEM_DATA_MESSAGES = {
  dataTooLarge: (bytes: number, max: number) => `data is ${bytes} bytes of JSON; at most ${max} are allowed`,
  dataNotAnObject: () => 'data must be a JSON object',
  itemNotHeld: (board: string, item: string) =>
    `no window of board "${board}" holds item "${item}": data is kept only for items the board holds`,
};

/**
 * Most bytes of data one read call answers (items.store's dataOf): the rows' data are read in calls of
 * at most ITEM_DATA_ROWS_PER_CALL items, each at most ITEM_DATA_BYTES. A `top` of 1 000 rows with 1 KB
 * each was one call of 18 M Redis instructions (7.7 ms in the worst-case harness): about 18 000
 * instructions a row, its data copied into Lua and out again (bench/split-call-instructions.ts).
 */
export const ITEM_DATA_READ_BYTES_PER_CALL = 256 * 1024;

/** Most items whose data one read call answers (ITEM_DATA_READ_BYTES_PER_CALL at ITEM_DATA_BYTES each). */
export const ITEM_DATA_ROWS_PER_CALL = Math.floor(ITEM_DATA_READ_BYTES_PER_CALL / ITEM_DATA_BYTES);
