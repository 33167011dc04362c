-- requires: actor_blocks, actor_log, board_write, call_state, idempotency, keyspace, likes, order, previous, prune, reader, segment_growth, segmentation, slot_due, snapshot, window, window_event
-- like: counts a user's like of an item once in every window, unless the same user's earlier like is
-- still inside any window of the board (dedupe); with `undo`, takes the like back out of every window
-- whose live slot still holds it, and out of at most take_back_segments of its segments: the rest over
-- the next calls (segment_growth_lib's take-backs). Also prunes likes that left every window.
-- Keys: cfg (the board config hash: holds the config version), likes (the likes zset: "<item>\31<user>"
--       -> like time, unix ms), then per window slots (its slots index zset) and top (its results zset)
-- Args (reader.read_call, CALLS.like): the board header (its budget: most expired-slot fields, and
--       likes, removed by this call), then item; user; undo (1 to take the like back, 0 to like);
--       idem_lib's idem_key, idem_fingerprint, idem_context, idem_retention; new_items (new items the
--       client may create: 0 or 1; -1: no quota); new_likes (new likes the client may create: 0 or 1;
--       -1: no quota: a like is new when the likes zset holds no like of this user for this item, an
--       unlike creates nothing); at_ms (the like's time, unix ms, not after now; a like only: it lands
--       in the slot of that time in every window whose live span holds that slot and that existed then,
--       like_windows); segments (the segments a like also counts in, joined by commas, "" for none:
--       recorded with the like, "<tag>:likesegs", so taking it back subtracts from them too);
--       segments_max (most live segments on this shard; 0: the board takes none); block_key (the user's
--       block key, the service's blockKeyOf; actor_lib: what a block of the user binds);
--       take_back_segments (most segments an unlike takes the like out of in this call); resume (1,
--       with undo: only go on with a take-back left recorded, never take back a held like)
-- Reply (reader.answer, CALLS.like, after idem_lib's outcome, context and, applied only, new items, new
--       likes created, the due time for the index, unix ms, 0: none, see due_to_index, and the segments
--       a take-back leaves for the next calls): draining
--       (0|1), counted (0|1: this call changed the counts), then scores, ranks, previous_ranks and marks
--       as increment answers them (board_write.standing_fields; rank 0: not ranked; previous rank: in
--       the window's latest snapshot, 0 when absent)
-- On a board with actors (config field `actors`) the user is the like's actor (actor_lib): a like adds
-- a contribution, an unlike takes it back, and a blocked user or item refuses a like (TB_RETRACTED).
-- Errors: TB_NO_BOARD, TB_STALE_CONFIG, TB_RETRACTED, TB_BOARD_FULL, TB_QUOTA items|likeUsers, TB_SEGMENT_LIMIT, TB_AT_OUT_OF_SPAN (no
--        window holds the like's slot), TB_LIKE_TAKE_BACK_PENDING (a like while its take-back is
--        recorded) (nothing applied)
-- The like's figures once applied: { draining, changed (0|1), score_1, rank_1, ..., score_W, rank_W,
-- previous_1, ..., previous_W[, marks] } (the flat list standing_fields reads from its third entry) and
-- the earliest due time of a slot it created (or nil). `changed`: the windows (0-based) the like (or its withdrawal) changes, by `delta` at `at_sec`.
local function like_standings(keys, header, item, changed, delta, at_sec, event_sec, draining, actor)
  local window_count = #header.windows
  local reply = { draining, 0 }
  -- A tie mark at most for each window (ties_lib takes their sequence numbers at once).
  call_state.CALL.marks_ahead = window_count
  local new_due_ms = window_event.standings_after(reply, keys, 3, header, item, at_sec, changed,
    function(slots_key, top_key, slot_start, rule)
      reply[2] = 1
      local score, new_due = window.add_event(slots_key, top_key, slot_start, rule.period_sec, item, delta, event_sec, rule)
      if delta > 0 then
        actor_log.ACTORS.add(slots_key, top_key, slot_start, actor or '', item, delta, nil, true)
      else
        actor_log.ACTORS.take_back(slots_key, top_key, slot_start, actor, item, -delta)
      end
      return score, new_due
    end)
  for w = 0, window_count - 1 do reply[#reply + 1] = previous.rank_of(keys[4 + 2 * w], item) end
  order.append_marks(reply, keys, 4, window_count, item)
  return reply, new_due_ms
end

-- The like's segments, in the windows `changed` at `at_sec`: a like counted records the segments it
-- names (none: forgets any an earlier like recorded) and adds to them; their views see `event_sec` as
-- the board's do, and the like's actor (nil: none) is kept as in the board's windows. (An unlike:
-- take_back below.) Returns the earliest due time of a segment slot it created, or nil.
local function like_segments(likes_key, windows, item, member, segments, changed, at_sec, event_sec, actor)
  local key = keyspace.sibling_key(likes_key, 'likes', 'likesegs')
  if #segments > 0 then
    redis.call('HSET', key, member, table.concat(segments, ','))
  else
    redis.call('HDEL', key, member)
  end
  return segmentation.segment_add(windows, segments, item, 1, at_sec, changed, event_sec, actor, 'like')
end

-- An unlike's take-back (segment_growth.take_back_plan: nil when there is none): records it, and answers the
-- board's windows it changes (none when it goes on with a recorded one), those of its segments, and
-- the like's second.
local function take_back(likes_key, member, plan, windows, now_sec)
  local board_changed, changed = {}, {}
  if not plan then return board_changed, changed, now_sec end
  segment_growth.record_take_back(likes_key, member, plan)
  for _, w in ipairs(likes.like_windows(plan.liked_ms, windows, now_sec)) do
    changed[w] = true
    if plan.held then board_changed[w] = true end
  end
  return board_changed, changed, math.floor(plan.liked_ms / 1000)
end

-- Whether the like counts, refused (an error reply) or not: a blocked user or item, a new segment past
-- segments.max, a new item or like past the allowances. Answers nil or the refusal, then the new items
-- and likes it creates.
local function like_admission(cfg_key, header, arg, windows, segments, actor, liked_ms)
  local actor_key = actor and arg.block_key
  local refusal = actor_blocks.refusal(cfg_key, actor_key, header.now_ms, arg.item)
    or segmentation.segment_refusal(cfg_key, segments, tonumber(arg.segments_max), header.now_sec)
  if refusal then return refusal end
  prune.settle(cfg_key, arg.item)
  local created_items
  created_items, refusal = board_write.admit_items(windows, { arg.item }, tonumber(arg.new_items))
  if refusal then return refusal end
  if liked_ms then return nil, created_items, 0 end
  if arg.new_likes == '0' then return 'TB_QUOTA likeUsers 1' end
  return nil, created_items, 1
end

-- The take-back an unlike runs (segment_growth.take_back_plan), nil for a like; `resume` never takes back a held one.
local function plan_of(cfg_key, likes_key, arg, member, liked_ms, actor, now_ms)
  if arg.undo ~= '1' then return nil end
  local refused = function() return actor_blocks.refusal(cfg_key, actor and arg.block_key, now_ms, arg.item) end
  local held_ms = arg.resume ~= '1' and liked_ms or nil
  return segment_growth.take_back_plan(likes_key, member, held_ms, tonumber(arg.take_back_segments), refused)
end

local function like(keys, args)
  local cfg_key, likes_key = keys[1], keys[2]
  local answer, header, arg, idem = board_write.begin_board_write(keys, args, CALLS.like)
  if answer then return answer end
  local now_ms, now_sec, window_count = header.now_ms, header.now_sec, #header.windows
  local windows = call_state.bind_windows(3, window_count)
  local _, draining = snapshot.open_write(windows, header)
  likes.prune_likes(likes_key, windows, now_sec, header.budget)
  local item = arg.item
  local member = item .. '\31' .. arg.user
  local undo = arg.undo == '1'
  local liked = redis.call('ZSCORE', likes_key, member)
  local liked_ms = liked and tonumber(liked) or nil
  local at_ms = tonumber(arg.at_ms)
  local holding = likes.like_windows(at_ms, windows, now_sec)
  if not undo and #holding == 0 then return redis.error_reply('TB_AT_OUT_OF_SPAN no window holds the slot') end
  if not undo and not liked_ms and segment_growth.take_back_pending(likes_key, member) then
    return redis.error_reply('TB_LIKE_TAKE_BACK_PENDING the take-back of this like is under way')
  end

  local counts = not undo and not (liked_ms and #likes.like_windows(liked_ms, windows, now_sec) > 0)
  local segments = segmentation.segment_names(arg.segments)
  local actor = call_state.config_field(cfg_key, 'actors') == '1' and arg.user or nil
  local plan = plan_of(cfg_key, likes_key, arg, member, liked_ms, actor, now_ms)
  segmentation.cross_named_segments(windows, plan and plan.chunk or (undo and {} or segments))
  local created_items, created_likes = 0, 0
  if counts then
    local refusal
    refusal, created_items, created_likes = like_admission(cfg_key, header, arg, windows, segments, actor, liked_ms)
    if refusal then return redis.error_reply(refusal) end
  end

  local board_changed, changed, at_sec = take_back(likes_key, member, plan, windows, now_sec)
  local delta, event_sec = -1, nil
  if counts then
    redis.call('ZADD', likes_key, at_ms, member)
    for _, w in ipairs(holding) do changed[w] = true end
    board_changed, delta, at_sec, event_sec = changed, 1, math.floor(at_ms / 1000), at_ms / 1000
  end
  local flat, new_due_ms = like_standings(keys, header, item, board_changed, delta, at_sec, event_sec, draining, actor)
  if plan then
    new_due_ms = segmentation.earliest_due(new_due_ms, segmentation.segment_add(windows, plan.chunk, item, -1, at_sec, changed, nil, actor, true))
  elseif counts then
    new_due_ms = segmentation.earliest_due(new_due_ms, like_segments(likes_key, windows, item, member, segments, changed, at_sec, event_sec, actor))
  end
  if flat[2] == 1 or (plan and #plan.chunk > 0) then snapshot.bump_version(cfg_key) end
  local due_ms = slot_due.due_to_index(windows, snapshot.with_snapshot_due(new_due_ms, windows, now_sec))
  local scores, ranks, previous_ranks, marks = board_write.standing_fields(flat, 3, window_count)
  local reply = reader.answer(CALLS.like, { draining = draining, counted = flat[2], scores = scores, ranks = ranks,
    previous_ranks = previous_ranks, marks = marks })
  local made = { items = created_items, likes = created_likes, due_ms = due_ms, take_back_left = plan and #plan.rest or 0 }
  return idempotency.idem_finish(cfg_key, 'cfg', idem, now_ms, reply, reader.record_of(CALLS.like.created, made, {}))
end
