-- retract_step: one bounded chunk of a retraction on one shard (an actor's events out of every
-- window, view and unique count; see actor_lib). A retraction is a record under the board's hash tag,
-- "<tag>:ret:<id>" (hash: actor, state, events, amount, startedMs), created by its first step; each
-- step takes at most `most` contributions out, removing each from the indexes in the same call that
-- subtracts it, so a step repeated (a retry, a second instance, a restart) finds nothing twice. The
-- record turns "done" on the first step that finds fewer than `most` left.
-- KEYS: dynamic
-- KEYS[1]        board config hash (holds the config version)
-- KEYS[2w], KEYS[2w+1] (w = 1..W): window w's slots index zset and results zset
-- KEYS[2W+2]     the retraction's record hash
-- ARGV[1]        config version the caller built its keys from
-- ARGV[2]        now, unix milliseconds
-- ARGV[3]        expiry budget: most expired-slot fields drained by this call
-- ARGV[4]        W, number of windows
-- ARGV[5+4(w-1)] .. ARGV[8+4(w-1)]: window w's period (s), interval (s), creation time (unix ms), origin (window_lib)
-- ARGV[5+4W]     the actor
-- ARGV[6+4W]     most contributions this step takes out (over every window)
-- ARGV[7+4W]     the ledger window (0-based): events and amount are counted from its contributions
--                only, so an event counts once however many windows held it
-- ARGV[8+4W]     block until (unix ms; 0: no block): the actor's new events are refused until then
-- ARGV[9+4W]     what the block binds: the actor's block key (the service's blockKeyOf) (actor_lib)
-- Reply: { done (0|1), contributions taken by this step, events, amount (the record's totals) }
-- Errors: TB_NO_BOARD, TB_STALE_CONFIG
-- Takes up to `most` of `actor`'s contributions out of one window (the board's or a segment's): out of
-- the index and its slot's contributions first, then subtracted from the slot, the results, the views
-- (as expiry does) and the unique counts. Returns how many it took and their events and amount.
local function retract_window(slots_key, top_key, actor, most)
  local byactor, pairs_key, byitem = ACTORS.window_keys(slots_key)
  local prefix = actor .. ACTORS.SEP
  local members = redis.call('ZRANGE', byactor, '[' .. prefix, '(' .. actor .. '\32', 'BYLEX', 'LIMIT', 0, most)
  if #members == 0 then return 0, 0, 0 end
  redis.call('ZREM', byactor, unpack(members))
  local events, amount = 0, 0
  for _, member in ipairs(members) do
    local start, item = string.match(string.sub(member, #prefix + 1), '^(%d+)\31(.*)$')
    redis.call('ZREM', byitem, item .. ACTORS.SEP .. start .. ACTORS.SEP .. actor)
    -- A like of the actor's goes with it, so that taking it back later subtracts nothing twice.
    ACTORS.forget_like(item .. ACTORS.SEP .. actor)
    local act_key = ACTORS.slot_key(slots_key, start)
    local sum, count = ACTORS.figures(redis.call('HGET', act_key, prefix .. item))
    redis.call('HDEL', act_key, prefix .. item)
    if sum ~= 0 then
      local score = add_amount(slot_key_of(slots_key, start), top_key, item, -sum)
      view_window_changed(top_key, tonumber(start), item, -sum, score, nil)
    end
    ACTORS.pair_moved(pairs_key, top_key, actor, item, -1)
    events, amount = events + count, amount + sum
  end
  return #members, events, amount
end

local function retract_step(keys, args)
  begin_call(keys, args)
  local err = version_error(KEYS[1], ARGV[1])
  if err then return redis.error_reply(err) end
  local now_ms, window_count = tonumber(ARGV[2]), tonumber(ARGV[4])
  local step = ACTORS.begin_retraction('actor', now_ms, window_count, 5 + WINDOW_ARGS * window_count)
  local record, actor, most, ledger = step.record, step.id, step.most, step.ledger
  cross_all(2, window_count, 5, math.floor(now_ms / 1000))
  expire_all(2, window_count, 5, math.floor(now_ms / 1000), tonumber(ARGV[3]))
  local taken = 0
  -- The board's windows, then each segment's (drained first where due: segment_lib's every_window).
  for _, window in ipairs(every_window(2, window_count, now_ms)) do
    if taken >= most then break end
    local count, events, amount = retract_window(window[1], window[2], actor, most - taken)
    taken = taken + count
    if window[4] == nil and window[3] == ledger and count > 0 then
      redis.call('HINCRBY', record, 'events', events)
      redis.call('HINCRBY', record, 'amount', amount)
    end
  end
  if taken > 0 then bump_version(KEYS[1], 1) end
  local done = taken < most
  if done then
    redis.call('HSET', record, 'state', 'done')
    redis.call('EXPIRE', record, ACTORS.KEEP_SEC)
  end
  local totals = redis.call('HMGET', record, 'events', 'amount')
  return { done and 1 or 0, taken, tonumber(totals[1]), tonumber(totals[2]) }
end
