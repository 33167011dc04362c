/** Most bytes (UTF-8) of one item's data, serialized as JSON. */
export const ITEM_DATA_BYTES = 1024;

/** Why an item's data is refused. */
export const ITEM_DATA_MESSAGES = {
  dataTooLarge: (bytes: number, max: number) => `data is ${bytes} bytes of JSON; at most ${max} are allowed`,
  dataNotAnObject: () => 'data must be a JSON object',
  itemNotHeld: (board: string, item: string) =>
    `no window of board "${board}" holds item "${item}": data is kept only for items the board holds`,
};
