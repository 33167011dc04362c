import { DomainError, InvalidInputError } from '../../../common/errors';
import { Reply } from '../../../redis/replies';
import { OPTION_LUA_MODULES } from '../registry';
import { itemDataJson, itemDataOf } from './item-data';
import { ITEM_DATA_BYTES } from './item-data.limits';

describe('the item-data option', () => {
  it('takes a JSON object of at most ITEM_DATA_BYTES bytes (UTF-8), serialized', () => {
    expect(itemDataJson({ name: 'Ada' })).toBe('{"name":"Ada"}');
    const fits = { s: 'x'.repeat(ITEM_DATA_BYTES - '{"s":""}'.length) };
    expect(Buffer.byteLength(itemDataJson(fits))).toBe(ITEM_DATA_BYTES);
    expect(() => itemDataJson({ s: `${fits.s}x` })).toThrow(DomainError);
    // Bytes, not characters: one é is two.
    expect(() => itemDataJson({ s: 'é'.repeat(ITEM_DATA_BYTES / 2) })).toThrow(/bytes of JSON/);
  });

  it('refuses anything but an object', () => {
    for (const data of [null, [], 'text', 3, true]) expect(() => itemDataJson(data)).toThrow(InvalidInputError);
  });

  it('decodes stored data: an object per item, null where none', () => {
    expect(itemDataOf(new Reply('tbRankItemDataRead', ['{"a":1}', null]), 2)).toEqual([{ a: 1 }, null]);
    expect(() => itemDataOf(new Reply('tbRankItemDataRead', ['{"a":1}']), 2)).toThrow();
  });

  it('loads its module into the libraries on boards', () => {
    expect(OPTION_LUA_MODULES.some((path) => path.endsWith('options/item-data/item_data_lib.lua'))).toBe(true);
  });
});
