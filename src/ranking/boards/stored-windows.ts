import type { WindowConfig } from '../core/window-math';

/** One plain window of the text form: name, period, interval and, unless the window before's, creation time. */
const PLAIN_WINDOW = /^(\S+) (\d+) (\d+)(?: (\d+))?$/;

/**
 * The windows a board config's field `windows` holds (stored_windows_lib.lua's store_windows writes it, through call_state): a JSON list,
 * as every config stored before the text form, or plain windows as text,
 * "<name> <periodSec> <intervalSec> <createdAtMs>" joined by ',', a window created in the same ms as
 * the one before it leaving its time out. The text keeps the config hash a listpack under Redis'
 * default hash-max-listpack-value.
 */
export function windowsFromStored(stored: string): WindowConfig[] {
  if (stored.startsWith('[') || stored.startsWith('{')) return JSON.parse(stored) as WindowConfig[];
  let createdAtMs = 0;
  return stored.split(',').map((text) => {
    const match = PLAIN_WINDOW.exec(text);
    if (!match) throw new Error(`a board config's windows field holds neither JSON nor plain windows: ${stored}`);
    if (match[4] !== undefined) createdAtMs = Number(match[4]);
    return { name: match[1], periodSec: Number(match[2]), intervalSec: Number(match[3]), createdAtMs };
  });
}
