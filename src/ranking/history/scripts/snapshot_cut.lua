-- requires: archive, board_write, keyspace, order, reader, snaprows, span
-- snapshot_cut: cuts one shard's kept snapshot of a window at one boundary to the rows at or before a
-- row of the board's order (higher score first, equal scores in descending byte order of id; on a
-- tiebreak board the pair order). A sharded board's shards each keep their own top rows, so the
-- board's merge of them holds rows past the board's `top` that an unsharded board never stored: cut
-- away before an item retraction takes a row out, they cannot move in (retraction.service). Rows kept
-- keep their positions; an archive's record (archive_lib) forgets the rows cut, so another metric's
-- rows no longer find them (listing_counts).
-- Keys: cfg (board config hash: holds the config version), slots (the window's slots index zset;
--       its snapshot keys are its siblings: snapshot_lib), top (the window's results zset)
-- Args (reader.read_call, CALLS.snapshot_cut): the header with the one window (its rule unused), then
--   at_sec      the snapshot's boundary (unix s): only a snapshot taken at exactly that boundary is cut
--   last_score, last_item  the last row kept
--   last_mark   its mark on a tiebreak board ('' elsewhere: rows then compare by score and id)
-- Reply (reader.answer, CALLS.snapshot_cut): cut (the rows cut)
-- Errors: TB_NO_BOARD, TB_STALE_CONFIG
-- Whether a row comes after the last row kept: span_lib's board order (byte order of ids, never Lua's
-- locale-bound string `<`); on a tiebreak board (both marked) by the pair first, equal pairs by id in
-- the board's order.
local function comes_after(last, score, mark, item, ascending)
  if last.mark == '' or not mark then return span.comes_before(last.score, last.item, score, item) end
  if score ~= last.score or mark ~= last.mark then return snaprows.row_ahead(last.score, last.mark, score, mark, ascending) end
  if ascending then return span.comes_before(0, item, 0, last.item) end
  return span.comes_before(0, last.item, 0, item)
end

local function snapshot_cut(keys, args)
  local slots_key, top_key = keys[2], keys[3]
  local refused, header, arg = board_write.begin_board_call(keys, args, CALLS.snapshot_cut)
  if refused then return refused end
  local key = keyspace.sibling_key(slots_key, 'slots', '') .. 'snap:' .. arg.at_sec
  local rows = redis.call('GET', key)
  if not rows then return reader.answer(CALLS.snapshot_cut, { cut = 0 }) end
  local last = { score = tonumber(arg.last_score), item = arg.last_item, mark = arg.last_mark }
  local ascending = order.ascending(slots_key)
  local row = string.find(rows, archive.SNAP_ROW, 1, true)
  while row do
    local field = string.find(rows, archive.SNAP_FIELD, row + 1, true)
    local item = string.sub(rows, row + 1, field - 1)
    local score, _, after, mark = snaprows.row_at(rows, row)
    if comes_after(last, score, mark, item, ascending) then
      local cut = select(2, string.gsub(string.sub(rows, row), archive.SNAP_ROW, ''))
      redis.call('SET', key, string.sub(rows, 1, row - 1), 'KEEPTTL')
      archive.record_forget(key, string.sub(rows, row))
      return reader.answer(CALLS.snapshot_cut, { cut = cut })
    end
    row = after <= #rows and after or nil
  end
  return reader.answer(CALLS.snapshot_cut, { cut = 0 })
end
