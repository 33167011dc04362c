-- requires: archive, call_state, group_of, group_parts, keyspace, order, reader, snaprows, window
-- group_history_store: shard 0 of a sharded member board keeps a group board's listing at a boundary
-- of the member window W, merged from the shards' parts (group_parts_lib; the merge:
-- src/ranking/group-boards/group-history.ts), as group_history_lib keeps an unsharded W's: the groups
-- in the board's order (ties by id bytes), those not listed left out, cut to the kept `top`; a
-- rolling W's snapshot (readable `keep` intervals from `at`) or a calendar W's archive of the period
-- starting at `at` (none without rows; the oldest beyond `keep` dropped), the newest one the previous
-- listing (<base>prev). The counted members of its groups are recorded for item retractions
-- (group_history_out_lib's counted_page, at most `room` members) a page of groups a call, in the
-- listing's order; the merge's last call (`listing` sent) keeps the listing and closes the record. A
-- listing already kept is kept as is (every call of its merge answers "kept"). The listing kept is
-- then rewritten without the items retracted since the merge began (`noted`: group_parts_lib's
-- retractions_applied).
-- Keys: cfg (shard 0's config hash)
-- Args (reader.read_call, CALLS.group_history_store): the header (now; no windows), then
--   board     the group board
--   window    the member window W
--   at        the boundary (unix s): a snapshot's end, an archive's period start
--   interval  W's interval (s); 0: W is a calendar window (an archive)
--   keep, top W's snapshot or archive setting
--   rule      "<top> <decay>" the scores were computed with (the record's)
--   room      counted members the listing's record may hold
--   boards    group boards over one member board at most (shard 0 names this one in its groupedBy,
--             so a retraction finds its listings there: group_history_retract)
--   token     the merge's (its calls write one record)
--   first     1: the merge's first call (its record starts afresh)
--   groups    JSON [[group, score, [item, score, ...]], ...]: the page's groups with a counted member,
--             in the listing's order (best first by score), their counted members best first
--   listing   "": more pages follow; else the last call: JSON [[group, score], ...] every group with a
--             counted member
--   noted     the newest retraction noted when the merge began (group_history_parts' on shard 0)
-- Reply (reader.answer, CALLS.group_history_store):
--   state     "kept": the listing was kept before (the merge stops); "stale": a later merge of the
--             boundary took its record (this one stops); "ok"
--   rows      the listing's rows stored (0 but on the last call)

-- The listing's rows: the groups listed, best first, at most `top`.
local function listed_rows(top_key, groups, top)
  local rows, ascending = {}, order.ascending(top_key)
  for _, g in ipairs(groups) do
    local score = tonumber(g[2])
    if order.listed(top_key, score) then rows[#rows + 1] = { item = g[1], score = score } end
  end
  table.sort(rows, function(r, t) return snaprows.ahead_of(r, t, ascending) end)
  while #rows > top do rows[#rows] = nil end
  return rows
end

-- The listing as kept text ("\30<group>\31<score>\31<n>"), and the previous listing's ZADD arguments.
local function listing_text(rows)
  local text, ranked = {}, {}
  for n, row in ipairs(rows) do
    local score = string.format('%.17g', row.score)
    text[n] = archive.SNAP_ROW .. row.item .. archive.SNAP_FIELD .. score .. archive.SNAP_FIELD .. n
    ranked[2 * n - 1], ranked[2 * n] = score, row.item
  end
  return table.concat(text), ranked
end

-- Drops kept listings `old` and their records.
local function unlinked(base, old)
  for _, at in ipairs(old) do
    redis.call('UNLINK', base .. 'snap:' .. at)
    group_of.GROUP_OF.counted_dropped(base, at)
    redis.call('ZREM', base .. 'snaps', at)
  end
end

-- The listing `rows` kept at `at` (see above), its record closed; the oldest beyond `keep` dropped.
local function kept(cfg_key, arg, base, rows, lifetime)
  local index, at = base .. 'snaps', tonumber(arg.at)
  unlinked(base, lifetime and redis.call('ZRANGE', index, '-inf', at - tonumber(arg.keep) * tonumber(arg.interval), 'BYSCORE')
    or redis.call('ZRANGE', index, 0, -tonumber(arg.keep)))
  group_of.GROUP_OF.attach(cfg_key, arg.window, arg.board, tonumber(arg.boards))
  local text, ranked = listing_text(rows)
  group_of.GROUP_OF.counted_closed(base, at, arg.rule, lifetime)
  redis.call('ZADD', index, at, at)
  if lifetime then redis.call('SET', base .. 'snap:' .. at, text, 'EX', lifetime) else redis.call('SET', base .. 'snap:' .. at, text) end
  if tonumber(redis.call('ZRANGE', index, -1, -1)[1]) == at then
    redis.call('DEL', base .. 'prev')
    if #rows > 0 then redis.call('ZADD', base .. 'prev', unpack(ranked)) end
    if #rows > 0 and lifetime then redis.call('EXPIRE', base .. 'prev', lifetime) end
  end
end

local function group_history_store(keys, args)
  call_state.begin_call(keys, args)
  local cfg_key = keys[1]
  local header, arg = reader.read_call(args, CALLS.group_history_store)
  local base = keyspace.sibling_key(cfg_key, 'cfg', arg.window .. '%' .. arg.board .. ':')
  local at, interval = tonumber(arg.at), tonumber(arg.interval)
  if redis.call('ZSCORE', base .. 'snaps', at) then return reader.answer(CALLS.group_history_store, { state = 'kept', rows = 0 }) end
  -- A snapshot is readable while its boundary is within `keep` intervals of the current slot's start
  -- (snapshot_kept_lib's find_snapshot); its keys live one interval longer. One merged late is kept
  -- all the same (the previous listing, as an unsharded member board's late crossing keeps it).
  local lifetime = nil
  if interval > 0 then
    lifetime = math.max(0, at + tonumber(arg.keep) * interval - window.current_slot(math.floor(header.now_ms / 1000), interval)) + interval
  end
  local page = { first = arg.first == '1', token = arg.token, groups = cjson.decode(arg.groups) }
  if not group_of.GROUP_OF.counted_page(base, at, page, tonumber(arg.room), lifetime) then
    return reader.answer(CALLS.group_history_store, { state = 'stale', rows = 0 })
  end
  if arg.listing == '' then return reader.answer(CALLS.group_history_store, { state = 'ok', rows = 0 }) end
  local rows = listed_rows(base .. 'top', cjson.decode(arg.listing), tonumber(arg.top))
  if interval == 0 and #rows == 0 then
    group_of.GROUP_OF.counted_dropped(base, at)
    return reader.answer(CALLS.group_history_store, { state = 'ok', rows = 0 })
  end
  kept(cfg_key, arg, base, rows, lifetime)
  local newest = tonumber(redis.call('ZRANGE', base .. 'snaps', -1, -1)[1]) == at
  group_parts.retractions_applied(base, at, newest, tonumber(arg.noted))
  return reader.answer(CALLS.group_history_store, { state = 'ok', rows = #rows })
end
