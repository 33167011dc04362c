-- requires: call_state, keyspace, order, reader, shown, snaprows, snapshot, window
-- history_count_shards: history_count summed over the shards of a sharded board one Redis node serves,
-- in one call instead of one per shard: how many rows of their snapshots rank ahead of given scores
-- (pairs on a tiebreak board), and how many of those the board's exceptions leave out now. Read-only
-- and across hash tags like count_above_shards (allow-cross-slot-keys: keys of any slot this node
-- serves; a key it does not serve fails the call and the caller counts shard by shard). A shard whose
-- window has a snapshot boundary to cross first (its snapshot not yet taken) is not counted but named,
-- for the caller to count with history_count, which crosses it first; so is a shard of a calendar
-- window whose archive of a period is still being taken (history_count drains it first).
-- Keys: route (the config hash of the first shard in `shards`: routes the call to the node serving it)
-- Args (reader.read_call, CALLS.history_count_shards): the header with the one window (no budget), then
--   window_key  the window's key name (a segment's: <window>~<segment>)
--   shards      JSON array: the config hash of each shard to count
--   points      JSON array of [boundary (unix s), score, mark ('' but on a tiebreak board)], as history_count's
--   rows        the call's budget in snapshot rows: a point counted weighs POINT_ROWS, plus its snapshot's
--               rows and the rows its left-out count steps through; no shard is begun once the budget is spent
-- Reply (reader.answer, CALLS.history_count_shards): pending { position (1-based, in `shards`) of each
--   shard not counted: a boundary to cross, or an archive to drain, first }; rest (position of the first shard left for another call, the budget spent; 0:
--   none); counts, left_out { per point, summed over the counted shards }
-- Errors: TB_NO_BOARD, TB_STALE_CONFIG (of any shard)

-- Whether the window of `slots_key` has no boundary left to cross (snapshot_lib's cross_boundary would
-- store nothing): it keeps no snapshots, or its mark is at the current slot (a segment's: or it has none).
local function crossed(cfg_key, slots_key, conf, segment, rule, now_sec)
  if not conf then return true end
  local current = window.current_slot(now_sec, rule.interval_sec, rule.origin_sec)
  local base = keyspace.sibling_key(slots_key, 'slots', '')
  local field = 'snapMark:' .. snapshot.window_name_of(cfg_key, slots_key)
  local mark = tonumber(segment and redis.call('GET', base .. 'mark') or redis.call('HGET', cfg_key, field))
  if mark then return mark >= current end
  return segment ~= nil
end

-- Whether a calendar window's archive of a period is still being taken on this shard (archive_lib: in
-- chunks, as its closed slot drains): a point of that period would miss the rows not yet written.
local function archiving(slots_key, rule)
  if (rule.origin_sec or 0) == 0 then return false end
  return redis.call('HLEN', keyspace.sibling_key(slots_key, 'slots', 'arch')) > 0
end

-- What a point weighs in rows besides the rows its left-out count steps through: the binary search of its
-- rows, about 0.16 M instructions a point on a shard of snapshots of ~30 rows (63 shards of 2 000 items in
-- one call, 2 points each: 20.7 M, bench/fanout-call-instructions.ts), as many as ~200 rows scanned; and a
-- row more per row its snapshot holds: GET copies the whole text into Lua, which hashes every byte of it
-- (a snapshot of 1 000 rows: 0.5 M a point, bench/history-shard-instructions.ts).
local POINT_ROWS = 200

-- Adds one shard's counts of every point to `sums` (history_count's, on that shard); answers the rows it weighed.
local function count_shard(sums, slots_key, conf, rule, now_sec, points)
  local ex = shown.exceptions_of(keyspace.sibling_key(slots_key, 'slots', 'top'))
  local ascending = order.ascending(slots_key)
  local weight = 0
  for i, point in ipairs(points) do
    weight = weight + POINT_ROWS
    local rows = shown.point_rows(slots_key, conf, rule, now_sec, point[1])
    if rows then
      weight = weight + (snaprows.row_count(rows) or 0)
      local above = snaprows.count_above(rows, point[2], ascending, point[3] ~= '' and point[3] or nil)
      sums.counts[i] = sums.counts[i] + above
      sums.left_out[i] = sums.left_out[i] + shown.left_out_ahead(ex, rows, point[2], ascending, above)
      -- left_out_ahead's steps: an id found per exception, or a row ahead each, whichever is fewer.
      if ex then weight = weight + math.min(above, #ex.list * shown.FIND_ROWS) end
    end
  end
  return weight
end

local function history_count_shards(keys, args)
  local route = keys[1]
  local header, arg = call_state.begin_named_call(keys, args, CALLS.history_count_shards)
  local rule, now_sec = header.windows[1], header.now_sec
  local points = cjson.decode(arg.points)
  local sums = { pending = {}, rest = 0, counts = {}, left_out = {} }
  for i = 1, #points do sums.counts[i], sums.left_out[i] = 0, 0 end
  local budget = tonumber(arg.rows)
  for s, cfg_key in ipairs(cjson.decode(arg.shards)) do
    if budget <= 0 then
      sums.rest = s
      break
    end
    local err = window.version_error(cfg_key, header.version)
    if err then return redis.error_reply(err) end
    local slots_key = keyspace.sibling_key(cfg_key, 'cfg', arg.window_key .. ':slots')
    local confs = snapshot.snapshot_confs(cfg_key)
    local conf, segment
    if confs then conf, segment = snapshot.snapshot_conf_of(confs, cfg_key, slots_key) end
    if crossed(cfg_key, slots_key, conf, segment, rule, now_sec) and not archiving(slots_key, rule) then
      if conf then budget = budget - count_shard(sums, slots_key, conf, rule, now_sec, points) end
    else
      sums.pending[#sums.pending + 1] = s
    end
  end
  return reader.answer(CALLS.history_count_shards, sums)
end
