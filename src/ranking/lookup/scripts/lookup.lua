-- requires: call_state, item_data, order, snapshot, window
-- lookup: scores of given item ids in one window of one shard, and how many items of the shard score
-- above given scores, after expiry. An unsharded lookup is one call (ids, and counts above their own
-- scores); a sharded one asks each shard for the scores of the ids it holds, then every shard for the
-- counts above those scores (rank = 1 + the items above on every shard).
-- KEYS: 3
-- KEYS[1]        board config hash (holds the config version)
-- KEYS[2]        the window's slots index zset
-- KEYS[3]        the window's results zset
-- ARGV[1]        config version the caller built its keys from
-- ARGV[2]        now, unix milliseconds
-- ARGV[3]        expiry budget: most expired-slot fields drained by this call
-- ARGV[4] .. ARGV[6]: the window's period and interval (s) and origin (window_lib)
-- ARGV[7]        N, number of ids; ARGV[8] 1 to answer each id's data (item_data_lib), else 0
-- ARGV[9 .. 8+N] item ids; ARGV[9+N ...] pairs: a score to count above, and its tie mark (a sharded
--                `ties: first` board: items of that score with an earlier mark count too; "": none)
-- Reply: { draining (0|1), { score of each id (0: none) }, { rank of each id in this shard (0: not
--          ranked; -1: held but left out of the listing: moderation) }, { previous rank of each id
--          (0: absent or no snapshots) }, { data of each id (false: none, or not asked) }, { items ahead of each (score, mark) given }, { tie mark of
--          each id ("": none, or not a sharded `ties: first` board) } }
-- Errors: TB_NO_BOARD, TB_STALE_CONFIG
local function lookup(keys, args)
  call_state.begin_call(keys, args)
  local err = window.version_error(keys[1], args[1])
  if err then return redis.error_reply(err) end
  local now_sec = math.floor(tonumber(args[2]) / 1000)
  local keeps = snapshot.cross_window(now_sec, tonumber(args[5]), tonumber(args[6]))
  local _, more = window.expire_window(keys[2], keys[3], now_sec, tonumber(args[4]), tonumber(args[5]), tonumber(args[3]), tonumber(args[6]))
  local id_count = tonumber(args[7])
  local scores, ranks, previous, data, above_counts, marks = {}, {}, {}, {}, {}, {}
  for i = 1, id_count do
    local item = args[8 + i]
    scores[i], ranks[i] = window.standing(keys[3], item)
    if ranks[i] == 0 and order.left_out(keys[3], item) then ranks[i] = -1 end
    previous[i] = keeps and snapshot.previous_rank(keys[3], item) or 0
    data[i] = false
    marks[i] = order.mark_of(keys[3], item)
  end
  if args[8] == '1' and id_count > 0 then data = item_data.item_data_of(keys[1], { unpack(args, 9, 8 + id_count) }) end
  for i = 9 + id_count, #args, 2 do
    local score = tonumber(args[i])
    above_counts[#above_counts + 1] = order.listed(keys[3], score) and order.ahead(keys[3], score, args[i + 1]) or 0
  end
  return { more and 1 or 0, scores, ranks, previous, data, above_counts, marks }
end
