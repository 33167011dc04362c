-- requires: board_write, call_state, item_data, order, reader, window
-- lookup_node: a whole lookup on a sharded board whose shards one Redis node serves (a single Redis,
-- or a Cluster node holding every shard), in one call: each id's score and data from its own shard,
-- and its board rank from every shard's count above it. Read-only and across hash tags
-- (allow-cross-slot-keys: keys of any slot this node serves; a key it does not serve fails the call
-- and the caller takes the two rounds of lookup and lookup_count_shards). A shard with expired slots
-- not yet drained answers nothing: the caller takes the two rounds, whose lookup drains it first.
-- Keys: route (the config hash of the first shard in `shards`: routes the call to the node serving it)
-- Args (reader.read_call, CALLS.lookup_node): the header with the one window (no budget), then
--   window_key    the window's key name (a segment's: <window>~<segment>)
--   shards        JSON array: the config hash of each shard
--   with_data     1 to answer each id's data (item_data_lib), else 0
--   board_ranks   1 to answer board ranks, else 0 (ranks among the ids need only the scores)
--   items, homes  JSON arrays of the same length: an id, and the position (1..S) of the shard holding it
--   counted       JSON array: the positions of the shards whose items ahead this call counts (every
--                 shard, or one part of them: the caller sums an id's parts, each call reading the id's
--                 standing itself, and compares those standings)
--   given         JSON array: empty, or of each id the standing [score, mark] to count ahead of: a
--                 re-count of a part of the shards none of the ids' homes is in, whose first call read
--                 a standing other than the home's part did (the ids' own shards are then not read)
-- Reply (reader.answer, CALLS.lookup_node): complete (0 when a shard has expired slots to drain: the
--   rest empty); scores { of each id, 0: none }; ranks { 1 + the items ahead of each id on the counted
--   shards, 0: not ranked or not asked; -1: left out of the listing, hidden; strict on a `ties: first`
--   board: the items ahead of its score and tie mark, tie_ahead }; data { of each id, false: none or not asked };
--   marks { each id's order mark on its shard, "": none (a tiebreak's: the row's tiebreak) }
-- Errors: TB_NO_BOARD, TB_STALE_CONFIG (of any shard)

local LOOKUP_NODE = { empty = {} }

-- The results key of the shard `cfg_key`, its config read (version checked); nil when it has expired
-- slots to drain, or nil and an error reply.
local function settled_top(cfg_key, header, arg)
  local err = window.version_error(cfg_key, header.version)
  if err then return nil, err end
  local settled = board_write.settled_tops(cfg_key, { arg.window_key }, header.windows, header.now_sec)
  return settled and settled[1]
end

-- Each home shard's results key (tops[s]), or false when one has expired slots to drain, or an error.
function LOOKUP_NODE.home_tops(header, arg, shards, homes)
  local tops = {}
  for _, home in ipairs(homes) do
    if not tops[home] then
      local top, err = settled_top(shards[home], header, arg)
      if not top then return false, err end
      tops[home] = top
    end
  end
  return tops
end

-- Checks every shard at the positions `shard_positions` (tops: the homes' so far) and adds to ranks[i]
-- of each id in `counted` the items ahead of it there: of its score and mark, or of its score only (counted once a shard
-- for every id of that score). Shard by shard, each shard's config read once (its version check; a
-- home's again when it counts): a count then asks only its own board's hooks (order_lib), not every
-- option's as a count on a shard other than the config last read does, about half a count's
-- instructions. False when a shard has expired slots to drain, or false and an error.
function LOOKUP_NODE.count_ahead(header, arg, shards, tops, counted, scores, marks, ranks)
  for _, s in ipairs(cjson.decode(arg.counted)) do
    local cfg_key = shards[s]
    if not tops[s] then
      local top, err = settled_top(cfg_key, header, arg)
      if not top then return false, err end
      tops[s] = top
    elseif #counted > 0 then
      call_state.read_config(cfg_key)
    end
    local above_of = {}
    for _, i in ipairs(counted) do
      local score, mark = scores[i], marks[i]
      if mark ~= '' then
        ranks[i] = ranks[i] + order.ahead(tops[s], score, mark)
      else
        above_of[score] = above_of[score] or order.ahead(tops[s], score, '')
        ranks[i] = ranks[i] + above_of[score]
      end
    end
  end
  return true
end

-- The reply of a lookup a shard's expired slots keep from answering (the caller takes the two rounds).
function LOOKUP_NODE.incomplete()
  local empty = LOOKUP_NODE.empty
  return reader.answer(CALLS.lookup_node, { complete = 0, scores = empty, ranks = empty, data = empty, marks = empty })
end

-- Each id's standing as given (a re-count): every id counted ahead of its score and mark, no data.
function LOOKUP_NODE.given_standings(given)
  local scores, ranks, data, marks, counted = {}, {}, {}, {}, {}
  for i, standing in ipairs(given) do
    scores[i], marks[i], ranks[i], data[i], counted[i] = standing[1], standing[2], 1, false, i
  end
  return scores, ranks, data, marks, counted
end

-- Each id's standing read from its home shard (tops[home]): score, mark, whether listed (counted:
-- those to rank) or left out (rank -1), and its data when asked.
function LOOKUP_NODE.read_standings(arg, shards, homes, tops)
  local with_data, with_ranks = arg.with_data == '1', arg.board_ranks == '1'
  local scores, ranks, data, marks, counted = {}, {}, {}, {}, {}
  for i, item in ipairs(cjson.decode(arg.items)) do
    local home = homes[i]
    local held = redis.call('ZSCORE', tops[home], item)
    local score = tonumber(held or '0')
    local listed = held and order.listed(tops[home], score)
    local left_out = listed and not order.shown(tops[home], item)
    if left_out then listed = false end
    scores[i], ranks[i] = score, left_out and -1 or 0
    -- A mark (a sharded `ties: first` board's, a tiebreak's): the items ahead of (score, mark) are counted.
    local mark = held and order.mark_of(tops[home], item) or ''
    marks[i] = mark
    if with_ranks and listed then
      ranks[i] = 1
      counted[#counted + 1] = i
    end
    data[i] = with_data and item_data.item_data_of(shards[home], { item })[1] or false
  end
  return scores, ranks, data, marks, counted
end

local function lookup_node(keys, args)
  local route = keys[1]
  local header, arg = call_state.begin_named_call(keys, args, CALLS.lookup_node)
  local shards, homes, given = cjson.decode(arg.shards), cjson.decode(arg.homes), cjson.decode(arg.given)
  local tops, scores, ranks, data, marks, counted = {}
  if #given > 0 then
    scores, ranks, data, marks, counted = LOOKUP_NODE.given_standings(given)
  else
    -- The homes first (their ids' scores and marks), then every shard checked and counting above them.
    local err
    tops, err = LOOKUP_NODE.home_tops(header, arg, shards, homes)
    if err then return redis.error_reply(err) end
    if not tops then return LOOKUP_NODE.incomplete() end
    scores, ranks, data, marks, counted = LOOKUP_NODE.read_standings(arg, shards, homes, tops)
  end
  local settled, count_err = LOOKUP_NODE.count_ahead(header, arg, shards, tops, counted, scores, marks, ranks)
  if count_err then return redis.error_reply(count_err) end
  if not settled then return LOOKUP_NODE.incomplete() end
  return reader.answer(CALLS.lookup_node, { complete = 1, scores = scores, ranks = ranks, data = data, marks = marks })
end
