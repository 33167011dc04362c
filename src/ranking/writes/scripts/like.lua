-- requires: actor_log, board_write, call_state, idempotency, keyspace, likes, order, segmentation, slot_due, snapshot, window
-- like: counts a user's like of an item once in every window, unless the same user's earlier like is
-- still inside any window of the board (dedupe); with `undo`, takes the like back out of every window
-- whose live slot still holds it. Also prunes likes that left every window.
-- KEYS: dynamic
-- KEYS[1]        board config hash (holds the config version)
-- KEYS[2]        likes zset: "<item>\31<user>" -> like time (unix ms)
-- KEYS[1+2w], KEYS[2+2w] (w = 1..W): window w's slots index zset and results zset
-- ARGV[1]        config version the caller built its keys from
-- ARGV[2]        now, unix milliseconds
-- ARGV[3]        expiry budget: most expired-slot fields (and likes) removed by this call
-- ARGV[4]        W, number of windows
-- ARGV[5+4(w-1)] .. ARGV[8+4(w-1)]: window w's period (s), interval (s), creation time (unix ms), origin (window_lib)
-- ARGV[5+4W]     item id
-- ARGV[6+4W]     user id
-- ARGV[7+4W]     undo: 1 to take the like back, 0 to like
-- ARGV[8+4W] .. ARGV[11+4W]: idempotency key ("" for none), request fingerprint, context, retention (ms)
-- ARGV[12+4W]    new items the client may create (0 or 1; -1: no quota)
-- ARGV[13+4W]    new likes the client may create (0 or 1; -1: no quota): a like is new when the likes
--                zset holds no like of this user for this item (an unlike creates nothing)
-- ARGV[14+4W]    the like's time, unix ms (not after now; a like only): it lands in the slot of that time
--                in every window whose live span holds that slot and that existed then (like_windows)
-- ARGV[15+4W]    the segments a like also counts in, joined by commas ("" for none): recorded with
--                the like ("<tag>:likesegs"), so taking it back subtracts from them too
-- ARGV[16+4W]    segments.max, most live segments on this shard (0: the board takes none)
-- ARGV[17+4W]    the user's block key (the service's blockKeyOf; actor_lib): what a block of the user binds
-- Reply: { outcome, context, [new items, new likes created, due time for the index (unix ms, 0: none;
--          see due_to_index): applied only], draining (0|1), counted (0|1): this call changed the
--          counts, score_1, rank_1, ..., score_W, rank_W, previous_rank_1, ..., previous_rank_W[,
--          tie_mark_1, ..., tie_mark_W as increment answers them] }
--          (rank 0: not ranked; previous rank: in the window's latest snapshot, 0 when absent;
--          outcome, context and the counts: idem_lib)
-- On a board with actors (config field `actors`) the user is the like's actor (actor_lib): a like adds
-- a contribution, an unlike takes it back, and a blocked user or item refuses a like (TB_RETRACTED).
-- Errors: TB_NO_BOARD, TB_STALE_CONFIG, TB_RETRACTED, TB_BOARD_FULL, TB_QUOTA items|likeUsers, TB_SEGMENT_LIMIT, TB_AT_OUT_OF_SPAN (no
--        window holds the like's slot) (nothing applied)
-- The reply's figures once the like is applied: { draining, changed (0|1), score_1, rank_1, ...,
-- score_W, rank_W, previous_1, ..., previous_W } and the earliest due time of a slot it created (or
-- nil). `changed`: the windows (0-based) the like (or its withdrawal) changes, by `delta` at `at_sec`.
local function like_standings(window_count, item, changed, delta, at_sec, event_sec, draining, actor)
  local reply = { draining, 0 }
  local new_due_ms = nil
  for w = 0, window_count - 1 do
    local slots_key, top_key = KEYS[3 + 2 * w], KEYS[4 + 2 * w]
    local score, rank
    if changed[w] then
      reply[2] = 1
      local period_sec, interval_sec, origin_sec = window.window_rule(5, w)
      local slot_start = window.current_slot(at_sec, interval_sec, origin_sec)
      local new_due
      score, new_due = window.add_event(slots_key, top_key, slot_start, period_sec, item, delta, event_sec)
      if delta > 0 then
        actor_log.ACTORS.add(slots_key, top_key, slot_start, actor or '', item, delta)
      else
        actor_log.ACTORS.take_back(slots_key, top_key, slot_start, actor, item, -delta)
      end
      if new_due then new_due_ms = math.min(new_due_ms or math.huge, new_due) end
      rank = window.item_rank(top_key, item, score)
    else
      score, rank = window.standing(top_key, item)
    end
    reply[#reply + 1] = score
    reply[#reply + 1] = rank
  end
  for w = 0, window_count - 1 do reply[#reply + 1] = snapshot.previous_rank(KEYS[4 + 2 * w], item) end
  order.append_marks(reply, KEYS, 4, window_count, item)
  return reply, new_due_ms
end

-- The like's segments, in the windows `changed` by `delta` at `at_sec`: a like counted records the
-- segments it names (none: forgets any an earlier like recorded) and adds to them; an unlike
-- subtracts from those recorded; their views see `event_sec` as the board's do, and the like's actor
-- (nil: none) is kept or taken back as in the board's windows. Returns the earliest due time of a
-- segment slot it created, or nil.
local function like_segments(window_count, item, member, segments, undo, changed, delta, at_sec, event_sec, actor)
  local key = keyspace.sibling_key(KEYS[2], 'likes', 'likesegs')
  if undo then
    segments = segmentation.segment_names(redis.call('HGET', key, member) or '')
    redis.call('HDEL', key, member)
  elseif #segments > 0 then
    redis.call('HSET', key, member, table.concat(segments, ','))
  else
    redis.call('HDEL', key, member)
  end
  return segmentation.segment_add(3, window_count, segments, item, delta, at_sec, changed, event_sec, actor, undo or 'like')
end

local function like(keys, args)
  call_state.begin_call(keys, args)
  local answer, now_ms, window_count, idem = board_write.begin_board_write(8)
  if answer then return answer end
  local now_sec = math.floor(now_ms / 1000)
  local budget = tonumber(ARGV[3])
  snapshot.cross_all(3, window_count, 5, now_sec)
  local draining = window.expire_all(3, window_count, 5, now_sec, budget)
  slot_due.settle_slot_due()
  likes.prune_likes(KEYS[2], window_count, now_sec, budget)
  local item = ARGV[5 + window.WINDOW_ARGS * window_count]
  local member = item .. '\31' .. ARGV[6 + window.WINDOW_ARGS * window_count]
  local undo = ARGV[7 + window.WINDOW_ARGS * window_count] == '1'
  local liked = redis.call('ZSCORE', KEYS[2], member)
  local liked_ms = liked and tonumber(liked) or nil
  local at_ms = tonumber(ARGV[14 + window.WINDOW_ARGS * window_count])
  local holding = likes.like_windows(at_ms, window_count, now_sec)
  if not undo and #holding == 0 then return redis.error_reply('TB_AT_OUT_OF_SPAN no window holds the slot') end

  local counts = not undo and not (liked_ms and #likes.like_windows(liked_ms, window_count, now_sec) > 0)
  local segments = segmentation.segment_names(ARGV[15 + window.WINDOW_ARGS * window_count])
  segmentation.cross_named_segments(3, window_count, undo and segmentation.segment_names(
    redis.call('HGET', keyspace.sibling_key(KEYS[2], 'likes', 'likesegs'), member) or '') or segments)
  local created_items, created_likes = 0, 0
  local actor = call_state.config_field(KEYS[1], 'actors') == '1' and ARGV[6 + window.WINDOW_ARGS * window_count] or nil
  if counts then
    local actor_key = actor and ARGV[17 + window.WINDOW_ARGS * window_count]
    local refusal = actor_log.ACTORS.refusal(KEYS[1], actor_key, now_ms, item) or segmentation.segment_refusal(KEYS[1], segments, tonumber(ARGV[16 + window.WINDOW_ARGS * window_count]), now_sec)
    if refusal then return redis.error_reply(refusal) end
    created_items, refusal = board_write.admit_items(3, window_count, { item }, tonumber(ARGV[12 + window.WINDOW_ARGS * window_count]))
    if refusal then return redis.error_reply(refusal) end
    if not liked_ms then
      if ARGV[13 + window.WINDOW_ARGS * window_count] == '0' then return redis.error_reply('TB_QUOTA likeUsers 1') end
      created_likes = 1
    end
  end

  local changed, delta, at_sec = {}, 1, now_sec
  if undo then
    if liked_ms then
      redis.call('ZREM', KEYS[2], member)
      for _, w in ipairs(likes.like_windows(liked_ms, window_count, now_sec)) do changed[w] = true end
    end
    delta, at_sec = -1, math.floor((liked_ms or now_ms) / 1000)
  elseif counts then
    redis.call('ZADD', KEYS[2], at_ms, member)
    for _, w in ipairs(holding) do changed[w] = true end
    at_sec = math.floor(at_ms / 1000)
  end

  local event_sec = nil
  if not undo then event_sec = at_ms / 1000 end
  local reply, new_due_ms = like_standings(window_count, item, changed, delta, at_sec, event_sec, draining, actor)
  if counts or (undo and liked_ms) then
    new_due_ms = segmentation.earliest_due(new_due_ms, like_segments(window_count, item, member, segments, undo, changed, delta, at_sec, event_sec, actor))
  end
  if reply[2] == 1 then snapshot.bump_version(KEYS[1]) end
  local due_ms = window.due_to_index(3, window_count, snapshot.with_snapshot_due(new_due_ms, 3, window_count, now_sec))
  return idempotency.idem_finish(KEYS[1], 'cfg', idem, now_ms, reply, { created_items, created_likes, due_ms })
end
