-- requires: call_state, keyspace, order, window
-- lookup_count_shards: the second round of a lookup on a sharded board, for every shard of the board
-- a Redis node serves in one call: how many items of those shards score above each given score in one
-- window. Read-only and across hash tags like count_above_shards (allow-cross-slot-keys: keys of any
-- slot this node serves; a key it does not serve fails the call and the caller counts shard by
-- shard). A shard with expired slots not yet drained is not counted but named, for the caller to
-- count with lookup, which drains it first.
-- KEYS: 1
-- KEYS[1]        the config hash of the first shard in ARGV (routes the call to the node serving it)
-- ARGV[1]        config version the caller built its keys from
-- ARGV[2]        now, unix milliseconds
-- ARGV[3]        the window's name; ARGV[4] .. ARGV[6]: its period and interval (s) and origin (window_lib)
-- ARGV[7]        S, number of scores; ARGV[8 .. 7+2S]: pairs, a score to count above and its tie mark
--                (as lookup's: "" for none)
-- ARGV[8+2S] ..  the config hash of each shard to count
-- Reply: { { position (1-based, among the shards in ARGV) of each shard not counted }, { items ahead
--          of each (score, mark), summed over the counted shards } }
-- Errors: TB_NO_BOARD, TB_STALE_CONFIG (of any shard)
local function lookup_count_shards(keys, args)
  call_state.begin_call(keys, args)
  local now_sec = math.floor(tonumber(args[2]) / 1000)
  -- Exclusive, as expire_window's: a calendar window's previous period may be shorter than its current.
  local cutoff = '(' .. window.live_from_sec(now_sec, tonumber(args[4]), tonumber(args[5]), tonumber(args[6]))
  local score_count = tonumber(args[7])
  local sums, pending = {}, {}
  for i = 1, score_count do sums[i] = 0 end
  for s = 8 + 2 * score_count, #args do
    local err = window.version_error(args[s], args[1])
    if err then return redis.error_reply(err) end
    local base = keyspace.sibling_key(args[s], 'cfg', args[3] .. ':')
    if #redis.call('ZRANGE', base .. 'slots', '-inf', cutoff, 'BYSCORE', 'LIMIT', 0, 1) > 0 then
      pending[#pending + 1] = s - 7 - 2 * score_count
    else
      for i = 1, score_count do
        sums[i] = sums[i] + order.ahead(base .. 'top', tonumber(args[6 + 2 * i]), args[7 + 2 * i])
      end
    end
  end
  return { pending, sums }
end
