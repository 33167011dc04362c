-- requires: call_state, item_data, keyspace, order, window
-- lookup_node: a whole lookup on a sharded board whose shards one Redis node serves (a single Redis,
-- or a Cluster node holding every shard), in one call: each id's score and data from its own shard,
-- and its board rank from every shard's count above it. Read-only and across hash tags
-- (allow-cross-slot-keys: keys of any slot this node serves; a key it does not serve fails the call
-- and the caller takes the two rounds of lookup and lookup_count_shards). A shard with expired slots
-- not yet drained answers nothing: the caller takes the two rounds, whose lookup drains it first.
-- KEYS: 1
-- KEYS[1]        the config hash of the first shard in ARGV (routes the call to the node serving it)
-- ARGV[1]        config version the caller built its keys from
-- ARGV[2]        now, unix milliseconds
-- ARGV[3]        the window's key name (a segment's: <window>~<segment>); ARGV[4] .. ARGV[6]: its period and interval (s) and origin (window_lib)
-- ARGV[7]        S, number of shards; ARGV[8 .. 7+S]: the config hash of each shard
-- ARGV[8+S]      1 to answer each id's data (item_data_lib), else 0
-- ARGV[9+S]      1 to answer board ranks, else 0 (ranks among the ids need only the scores)
-- ARGV[10+S] ..  pairs: an id, and the position (1..S) of the shard holding it
-- Reply: { 0 } when a shard has expired slots to drain; else { 1, { score of each id (0: none) },
--          { board rank of each id (0: not ranked, or not asked; -1: left out of the listing, hidden;
--          strict on a `ties: first` board: the
--          items ahead of its score and tie mark on every shard, tie_ahead) }, { data of each id
--          (false: none, or not asked) } }
-- Errors: TB_NO_BOARD, TB_STALE_CONFIG (of any shard)
local function lookup_node(keys, args)
  call_state.begin_call(keys, args)
  local now_sec = math.floor(tonumber(args[2]) / 1000)
  -- Exclusive, as expire_window's: a calendar window's previous period may be shorter than its current.
  local cutoff = '(' .. window.live_from_sec(now_sec, tonumber(args[4]), tonumber(args[5]), tonumber(args[6]))
  local shard_count = tonumber(args[7])
  local tops = {}
  for s = 1, shard_count do
    local cfg_key = args[7 + s]
    local err = window.version_error(cfg_key, args[1])
    if err then return redis.error_reply(err) end
    local base = keyspace.sibling_key(cfg_key, 'cfg', args[3] .. ':')
    if #redis.call('ZRANGE', base .. 'slots', '-inf', cutoff, 'BYSCORE', 'LIMIT', 0, 1) > 0 then return { 0 } end
    tops[s] = base .. 'top'
  end
  local with_data, with_ranks = args[8 + shard_count] == '1', args[9 + shard_count] == '1'
  -- Strict ranks (a sharded `ties: first` board): decided once, the marks read from each id's shard.
  local strict = with_ranks and order.strict(tops[1])
  local scores, ranks, data, above_of = {}, {}, {}, {}
  for at = 10 + shard_count, #args, 2 do
    local item, home = args[at], tonumber(args[at + 1])
    local held = redis.call('ZSCORE', tops[home], item)
    local score = tonumber(held or '0')
    local listed = held and order.listed(tops[home], score)
    local left_out = listed and not order.shown(tops[home], item)
    if left_out then listed = false end
    scores[#scores + 1] = score
    ranks[#ranks + 1] = left_out and -1 or 0
    local mark = strict and listed and redis.call('HGET', keyspace.sibling_key(tops[home], 'top', 'marks'), item)
    if mark then
      ranks[#ranks] = 1
      for s = 1, shard_count do ranks[#ranks] = ranks[#ranks] + order.ahead(tops[s], score, mark) end
    elseif with_ranks and listed then
      if not above_of[score] then
        above_of[score] = 0
        for s = 1, shard_count do above_of[score] = above_of[score] + order.ahead(tops[s], score, '') end
      end
      ranks[#ranks] = above_of[score] + 1
    end
    data[#data + 1] = with_data and (redis.call('HGET', item_data.item_data_key(args[7 + home]), item) or false) or false
  end
  return { 1, scores, ranks, data }
end
