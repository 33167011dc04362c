-- module: snaptake
-- requires: archive, call_state, order
-- snapshot_take_lib: how snapshot_lib stores a listing as a snapshot at a slot boundary (its format
-- and keys: snapshot_lib's header); group_history_lib stores a group board's listings the same way.
-- KEYS: 0

-- A snapshot stays readable for `keep` intervals: its own and the keep - 1 after it.
local function snapshot_lifetime_sec(conf, interval_sec) return conf.keep * interval_sec end

-- Whether the results `top_key` hold (score, tiebreak) pairs (hook tiebreak: an order when they do).
local function keeps_pairs(top_key)
  for _, asked in ipairs(call_state.hooks_of_top(top_key).tiebreak) do
    if asked(top_key, '') then return true end
  end
  return false
end

-- A tiebreak board's listing as its live reads order and rank it: rows in its pair order with their
-- marks, and the previous listing's ZADD arguments (each row's competition rank on the pair, strict:
-- its position, negated on a board whose higher scores come first).
local function pair_rows(top_key, top)
  local marks, page = {}, nil
  -- The order's page as every read's starts from it (order_lib's base_page: the first answer), with
  -- every row the board holds, moderated or not, as snapshots keep them.
  for _, page_of in ipairs(call_state.hooks_of_top(top_key).page) do
    page = page or page_of(top_key, 0, top - 1, marks)
  end
  local strict, sign = order.strict(top_key), order.ascending(top_key) and 1 or -1
  local rows, ranked, rank = {}, {}, 0
  for i = 1, #page, 2 do
    local n = #rows + 1
    if strict or n == 1 or page[i + 1] ~= page[i - 1] or marks[n] ~= marks[n - 1] then rank = n end
    rows[n] = archive.SNAP_ROW .. page[i] .. archive.SNAP_FIELD .. page[i + 1] .. archive.SNAP_FIELD .. marks[n]
      .. archive.SNAP_FIELD .. n
    ranked[2 * n - 1], ranked[2 * n] = sign * rank, page[i]
  end
  return rows, ranked
end

-- The previous listing of a board of scores: the snapshot's rows, a prefix of the results in the
-- page's order, copied inside Redis (ZRANGESTORE replaces it), not through Lua.
local function store_previous(prev, top_key, count, ranked)
  if count == 0 then
    redis.call('DEL', prev)
  elseif ranked then
    redis.call('DEL', prev)
    redis.call('ZADD', prev, unpack(ranked))
  elseif order.ascending(top_key) then
    redis.call('ZRANGESTORE', prev, top_key, 0, count - 1)
  else
    redis.call('ZRANGESTORE', prev, top_key, 0, count - 1, 'REV')
  end
end

-- Stores the listing of `top_key` as the snapshot at boundary `at` and makes it the previous listing;
-- answers its rows.
-- (A calendar window's archives are taken by archive_lib instead, in chunks, and kept by count.)
local function take_snapshot(base, top_key, at, conf, interval_sec)
  local rows, ranked = {}, nil
  if keeps_pairs(top_key) then
    rows, ranked = pair_rows(top_key, conf.top)
  else
    local page = order.score_page(top_key, 0, conf.top - 1)
    for i = 1, #page, 2 do
      if not order.listed(top_key, tonumber(page[i + 1])) then break end
      rows[#rows + 1] = archive.SNAP_ROW .. page[i] .. archive.SNAP_FIELD .. page[i + 1] .. archive.SNAP_FIELD .. (#rows + 1)
    end
  end
  local index = base .. 'snaps'
  for _, old in ipairs(redis.call('ZRANGE', index, '-inf', at - snapshot_lifetime_sec(conf, interval_sec), 'BYSCORE')) do
    redis.call('UNLINK', base .. 'snap:' .. old)
    redis.call('ZREM', index, old)
  end
  local prev = base .. 'prev'
  store_previous(prev, top_key, #rows, ranked)
  redis.call('ZADD', index, at, at)
  local lifetime = snapshot_lifetime_sec(conf, interval_sec)
  redis.call('SET', base .. 'snap:' .. at, table.concat(rows), 'EX', lifetime)
  redis.call('EXPIRE', index, lifetime)
  if #rows > 0 then redis.call('EXPIRE', prev, lifetime) end
  return #rows
end

snaptake.snapshot_lifetime_sec = snapshot_lifetime_sec
snaptake.store_previous = store_previous
snaptake.take_snapshot = take_snapshot
