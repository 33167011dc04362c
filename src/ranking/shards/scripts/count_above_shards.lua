-- requires: call_state, keyspace, order, window
-- count_above_shards: count_above summed over several shards of a sharded board that live on this Redis
-- node, in one call instead of one per shard (the other shards' share of a write's or an item's rank).
-- The one script that reads keys of several hash tags: the shards' config keys come in ARGV, and the
-- allow-cross-slot-keys flag (Redis >= 7.0) lets it read keys of any slot this node serves. On a Cluster
-- the caller groups shards by node; a key this node does not serve fails the call ("non local key"), and
-- the caller then counts shard by shard. Read-only (no-writes): a shard with expired slots not yet
-- drained is not counted here but named in the reply, for the caller to count with count_above, which
-- drains it first.
-- KEYS: 1
-- KEYS[1]        the config hash of the first shard in ARGV (routes the call to the node serving it)
-- ARGV[1]        config version the caller built its keys from
-- ARGV[2]        now, unix milliseconds
-- ARGV[3]        W, number of windows
-- ARGV[4+4(w-1)] .. ARGV[7+4(w-1)]: window w's name, period (s), interval (s), origin (window_lib)

-- ARGV[4+4W+(w-1)] score of window w to count above (<= 0: count nothing)
-- ARGV[4+5W+(w-1)] a tie mark for window w's score, or "" (as count_above)
-- ARGV[4+6W] ..  the config hash of each shard to count
-- Reply: { P, position (1-based, among the shards in ARGV) of each of the P shards not counted,
--          above_1, ranked_1, ..., above_W, ranked_W over the counted shards }
-- Errors: TB_NO_BOARD, TB_STALE_CONFIG (of any shard)
local function count_above_shards(keys, args)
  call_state.begin_call(keys, args)
  local now_sec = math.floor(tonumber(ARGV[2]) / 1000)
  local window_count = tonumber(ARGV[3])
  local first_score = 4 + window.WINDOW_ARGS * window_count
  local first_mark = first_score + window_count
  local first_shard = first_mark + window_count
  local above_sum, ranked_sum, pending = {}, {}, {}
  for w = 1, window_count do
    above_sum[w] = 0
    ranked_sum[w] = 0
  end
  for s = first_shard, #ARGV do
    local cfg_key = ARGV[s]
    local err = window.version_error(cfg_key, ARGV[1])
    if err then return redis.error_reply(err) end
    local tops = {}
    for w = 0, window_count - 1 do
      local base = keyspace.sibling_key(cfg_key, 'cfg', ARGV[4 + window.WINDOW_ARGS * w] .. ':')
      local period_sec, interval_sec = tonumber(ARGV[5 + window.WINDOW_ARGS * w]), tonumber(ARGV[6 + window.WINDOW_ARGS * w])
      local cutoff = '(' .. window.live_from_sec(now_sec, period_sec, interval_sec, tonumber(ARGV[7 + window.WINDOW_ARGS * w]))
      if #redis.call('ZRANGE', base .. 'slots', '-inf', cutoff, 'BYSCORE', 'LIMIT', 0, 1) > 0 then
        tops = nil
        break
      end
      tops[w + 1] = base .. 'top'
    end
    if tops then
      for w = 1, window_count do
        local score = tonumber(ARGV[first_score + w - 1])
        if order.listed(tops[w], score) then above_sum[w] = above_sum[w] + order.ahead(tops[w], score, ARGV[first_mark + w - 1]) end
        ranked_sum[w] = ranked_sum[w] + order.listed_count(tops[w])
      end
    else
      pending[#pending + 1] = s - first_shard + 1
    end
  end
  local reply = { #pending }
  for _, position in ipairs(pending) do reply[#reply + 1] = position end
  for w = 1, window_count do
    reply[#reply + 1] = above_sum[w]
    reply[#reply + 1] = ranked_sum[w]
  end
  return reply
end
