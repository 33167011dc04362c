-- requires: call_state, group_parts, keyspace, reader
-- group_history_parts: one shard of a sharded member board in the merge of a group board's listings
-- (group_parts_lib; src/ranking/group-boards/group-history.ts), a bounded piece a call: the shard's
-- recorded parts (their boundaries, no groups), or one page of a part's groups, or drops the parts
-- at or before `upto` once merged. Reads change no part: a merge cut short reads them again.
-- Keys: cfg (the shard's config hash)
-- Args (reader.read_call, CALLS.group_history_parts): the header (no windows), then
--   board     the group board
--   window    the member window W
--   upto      "": a read; else drop the parts at or before this boundary (unix s)
--   at        "": answer the parts; else a page of the groups of the part at this boundary
--   after     the page's groups start after the after-th the part recorded (0: its first)
--   rows      a page's members at most (one group whatever its size)
--   boards    0; on shard 0's listing of its parts (the merge's first call there), group boards over one
--             member board at most: the group board is named there (group_parts_lib's merge_began)
-- Reply (reader.answer, CALLS.group_history_parts):
--   parts     JSON [[at, over (0|1), groups recorded], ...], oldest first
--   since     the slot start of the shard's first membership change (-1: none)
--   groups    a page: JSON [[group, [item, score, retracted (0|1), ...]], ...]
--   last      a page: the last group answered (-1: the part's last)
--   noted     shard 0's listing: the newest retraction noted (0: none; merge_began)
local function group_history_parts(keys, args)
  call_state.begin_call(keys, args)
  local cfg_key = keys[1]
  local _, arg = reader.read_call(args, CALLS.group_history_parts)
  local base = keyspace.sibling_key(cfg_key, 'cfg', arg.window .. '%' .. arg.board .. ':')
  local answer = { parts = '[]', since = -1, groups = '[]', last = -1, noted = 0 }
  if arg.upto ~= '' then
    group_parts.dropped(base, tonumber(arg.upto))
  elseif arg.at ~= '' then
    local groups, last = group_parts.read_page(base, arg.at, tonumber(arg.after), tonumber(arg.rows))
    answer.groups, answer.last = #groups == 0 and '[]' or cjson.encode(groups), last
  else
    if tonumber(arg.boards) > 0 then answer.noted = group_parts.merge_began(cfg_key, base, arg.window, arg.board, tonumber(arg.boards)) end
    local parts, since = group_parts.read_parts(base)
    answer.parts, answer.since = #parts == 0 and '[]' or cjson.encode(parts), since
  end
  return reader.answer(CALLS.group_history_parts, answer)
end
