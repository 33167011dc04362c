-- requires: call_state, order, snapshot, window
-- read_neighbours: for a sharded board's around read, this shard's items just before and just after
-- the place a (score, item) pair takes in the board order, after expiring what fell out. On the
-- item's own shard that place is the item's; on another shard the pair is inserted, ranked and
-- removed again inside this script, so nobody ever sees it.
-- KEYS: 3
-- KEYS[1]        the shard's config hash (holds the config version)
-- KEYS[2]        the window's slots index zset on this shard
-- KEYS[3]        the window's results zset on this shard
-- ARGV[1]        config version the caller built its keys from
-- ARGV[2]        now, unix milliseconds
-- ARGV[3]        expiry budget: most expired-slot fields drained by this call
-- ARGV[4] .. ARGV[6]: the window's period and interval (s) and origin (window_lib)
-- ARGV[7]        item id
-- ARGV[8]        its score (> 0), read from its own shard
-- ARGV[9]        radius: most neighbours wanted on each side
-- ARGV[10]       the item's tie mark on a sharded `ties: first` board ("" or absent: none): the place is
--                then the (score, mark) pair's in the strict order (order_lib's ahead and page)
-- Reply: { draining (0|1), items of this shard before the place (0-based position of the place),
--          items scoring above the score, number of items before, { tie mark of each row (with a
--          mark; else empty) }, item_1, score_1, ... (up to radius items before the place, then up
--          to radius items after it, in board order) }
-- Errors: TB_NO_BOARD, TB_STALE_CONFIG
-- read_neighbours' reply in the strict order: the place of (score, mark) is after the items ahead of
-- it (on the item's own shard, the item's own place: it is left out of the rows after).
local function marked_neighbours(more, top_key, item, score, radius, mark)
  local position = order.ahead(top_key, score, mark)
  local skip = order.mark_of(top_key, item) == mark and 1 or 0
  local marks = {}
  local before = position > 0 and order.page(top_key, math.max(0, position - radius), position - 1, marks) or {}
  local after = order.page(top_key, position + skip, position + skip + radius - 1, marks)
  local reply = { more and 1 or 0, position, order.ahead(top_key, score, ''), #before / 2, marks }
  for _, value in ipairs(before) do reply[#reply + 1] = value end
  for _, value in ipairs(after) do reply[#reply + 1] = value end
  return reply
end

local function read_neighbours(keys, args)
  call_state.begin_call(keys, args)
  local err = window.version_error(KEYS[1], ARGV[1])
  if err then return redis.error_reply(err) end
  local now_sec = math.floor(tonumber(ARGV[2]) / 1000)
  snapshot.cross_window(now_sec, tonumber(ARGV[5]), tonumber(ARGV[6]))
  local _, more = window.expire_window(KEYS[2], KEYS[3], now_sec, tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[3]), tonumber(ARGV[6]))
  local top_key, item, score, radius = KEYS[3], ARGV[7], tonumber(ARGV[8]), tonumber(ARGV[9])
  if (ARGV[10] or '') ~= '' then return marked_neighbours(more, top_key, item, score, radius, ARGV[10]) end
  local inserted = redis.call('ZSCORE', top_key, item) == false
  if inserted then
    -- A write first (a no-op: the item is not here) lets the ZADD through on a full Redis: Redis refuses
    -- commands that can grow memory only while a script has written nothing, and this one removes what
    -- it adds before it ends.
    redis.call('ZREM', top_key, item)
    redis.call('ZADD', top_key, ARGV[8], item)
  end
  local position = redis.call('ZREVRANK', top_key, item)
  local before = {}
  if position > 0 then before = redis.call('ZREVRANGE', top_key, math.max(0, position - radius), position - 1, 'WITHSCORES') end
  local after = redis.call('ZREVRANGE', top_key, position + 1, position + radius, 'WITHSCORES')
  if inserted then redis.call('ZREM', top_key, item) end
  local reply = { more and 1 or 0, position, redis.call('ZCOUNT', top_key, window.above(score), '+inf'), #before / 2, {} }
  for _, value in ipairs(before) do reply[#reply + 1] = value end
  for _, value in ipairs(after) do reply[#reply + 1] = value end
  return reply
end
