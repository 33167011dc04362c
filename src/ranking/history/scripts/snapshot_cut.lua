-- requires: archive, call_state, keyspace, snapshot, span, window
-- snapshot_cut: cuts one shard's kept snapshot of a window at one boundary to the rows at or before a
-- row of the board's order (higher score first, equal scores in descending byte order of id). A
-- sharded board's shards each keep their own top rows, so the board's merge of them holds rows past
-- the board's `top` that an unsharded board never stored: cut away before an item retraction takes a
-- row out, they cannot move in (retraction.service). Rows kept keep their positions.
-- KEYS: 3
-- KEYS[1]        board config hash (holds the config version)
-- KEYS[2]        the window's slots index zset (its snapshot keys are its siblings: snapshot_lib)
-- KEYS[3]        the window's results zset
-- ARGV[1]        config version the caller built its keys from
-- ARGV[2]        now, unix milliseconds
-- ARGV[3]        expiry budget (unused)
-- ARGV[4] .. ARGV[6]: the window's period and interval (s) and origin (window_lib)
-- ARGV[7]        the snapshot's boundary (unix s): only a snapshot taken at exactly that boundary is cut
-- ARGV[8], ARGV[9]: the last row kept: its score and item
-- Reply: { rows cut }
-- Errors: TB_NO_BOARD, TB_STALE_CONFIG
local function snapshot_cut(keys, args)
  call_state.begin_call(keys, args)
  local err = window.version_error(KEYS[1], ARGV[1])
  if err then return redis.error_reply(err) end
  local key = keyspace.sibling_key(KEYS[2], 'slots', '') .. 'snap:' .. ARGV[7]
  local rows = redis.call('GET', key)
  if not rows then return { 0 } end
  local last_score, last_item = tonumber(ARGV[8]), ARGV[9]
  local row = string.find(rows, archive.SNAP_ROW, 1, true)
  while row do
    local field = string.find(rows, archive.SNAP_FIELD, row + 1, true)
    local item = string.sub(rows, row + 1, field - 1)
    local score, _, after = snapshot.snapshot_row_at(rows, row)
    -- span_lib's board order (byte order of ids, never Lua's locale-bound string `<`).
    if span.comes_before(last_score, last_item, score, item) then
      local cut = select(2, string.gsub(string.sub(rows, row), archive.SNAP_ROW, ''))
      redis.call('SET', key, string.sub(rows, 1, row - 1), 'KEEPTTL')
      return { cut }
    end
    row = after <= #rows and after or nil
  end
  return { 0 }
end
