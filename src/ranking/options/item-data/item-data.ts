import { DomainError, InvalidInputError } from '../../../common/errors';
import { Reply } from '../../../redis/replies';
import { ITEM_DATA_BYTES, ITEM_DATA_MESSAGES as M } from './item-data.limits';

/** An item's data: a JSON object of at most ITEM_DATA_BYTES (PUT /boards/:board/items/:item/data). */
export type ItemData = Record<string, unknown>;

/** The serialized data, checked: a JSON object of at most ITEM_DATA_BYTES bytes (UTF-8). */
export function itemDataJson(data: unknown): string {
  if (typeof data !== 'object' || data === null || Array.isArray(data))
    throw new InvalidInputError(M.dataNotAnObject());
  const json = JSON.stringify(data);
  const bytes = Buffer.byteLength(json);
  if (bytes > ITEM_DATA_BYTES) throw new DomainError('DATA_TOO_LARGE', M.dataTooLarge(bytes, ITEM_DATA_BYTES));
  return json;
}

/** Stored data as a script answers it (item_data_lib): each value a JSON object the write checked, false: none. */
export function itemDataOf(reply: Reply, count: number): Array<ItemData | null> {
  reply.expectLength(count);
  return Array.from({ length: count }, (_, i) => {
    const json = reply.optionalString(i);
    return json === null ? null : (JSON.parse(json) as ItemData);
  });
}
