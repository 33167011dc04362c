-- requires: actor_log, board_write, call_state, groups, idempotency, order, segment_growth, segmentation, slot_due, snapshot, window
-- increment: adds amounts to items in every window of a board, expiring what fell out first. One call
-- carries one request or several that arrived together for this shard (WRITE_COALESCE_MS): they are
-- applied one after another in the given order, each exactly as it would be alone: its own
-- idempotency key, event time and growth allowance, its own answer (ranks as of its own addition); a
-- refused request changes nothing while the others go on.
-- KEYS: dynamic
-- KEYS[1]        board config hash (holds the config version)
-- KEYS[2w], KEYS[2w+1] (w = 1..W): window w's slots index zset and results zset
-- ARGV[1]        config version the caller built its keys from
-- ARGV[2]        now, unix milliseconds
-- ARGV[3]        expiry budget: most expired-slot fields drained by this call
-- ARGV[4]        W, number of windows
-- ARGV[5+4(w-1)] .. ARGV[8+4(w-1)]: window w's period (s), interval (s), creation time (unix ms), origin (window_lib)
-- ARGV[5+4W]     context stored with each keyed answer (the window names)
-- ARGV[6+4W]     segments.max, most live segments on this shard (0: the board takes none)
-- ARGV[7+4W]     request stride: 12, each request is twelve arguments (below); 13, the same and the
--                item's group ("" none: unchanged; groups_lib) last; 3, item id, amount and
--                new items the client may create, each request without a key, at now (the caller may
--                send an event of now's second so on a board without views: only a view reads an
--                event's time finer than its second), with no creation time, segments or actor (a call
--                of plain requests, most: fewer arguments to pass and to turn into Lua strings); 2,
--                the same plain requests when they share their allowance (most such calls), which
--                then comes once, in ARGV[8+4W], and each request is its item id and amount
-- ARGV[8+4W ...] (ARGV[9+4W ...] at stride 2) twelve per request: item id; amount (integer, non-zero,
--                written as a decimal integer with no sign but '-', no leading zero or exponent);
--                idempotency key ("" for none); request fingerprint; retention (ms; negative: no budget
--                to store an answer, see idem_lib); new items the client may create (0 or 1; -1: no
--                quota); the event's time, unix ms (not after now: it lands in the slot of that time in
--                every window whose live span still holds that slot, and only those); the item's
--                creation time, unix ms, or "" for none (a hot view's firstSeen is the earliest of the
--                item's event and creation times); the segments it also counts in, joined by commas (""
--                for none; see segment_lib); the actor ("" for none; with its block key when that
--                differs, ACTORS.split; a blocked actor or item refuses the request, TB_RETRACTED
--                <actor|item> <until ms>); new actor contributions and new segment entries the client
--                may create (-1: no quota; GROWTH, segment_lib)
-- Reply: flat, no table per request (a nested answer per request cost Redis about a sixth of a plain
--        request's time to build and encode, and the service as much to decode): the call's draining
--        flag (0|1), then one record per request, in order:
--        -1, created, score_1, rank_1, ..., score_W, rank_W: a plain request (increment_plain) applied,
--          its other figures implied (outcome 0, the call's context, due time 0, no previous ranks);
--        or n, then the request's answer of n entries: { outcome, context, [new items created, due
--          time for the index (unix ms, 0: none; see due_to_index), new actor contributions, new
--          segment entries: applied only], draining (0|1),
--          score_1, rank_1, ..., score_W, rank_W, previous_rank_1, ..., previous_rank_W[, tie_mark_1,
--          ..., tie_mark_W: a sharded `ties: first` board only, "" where not ranked] } (rank 0: not
--          ranked; previous rank: in the window's latest snapshot, 0 when absent or the window keeps
--          none; outcome, context and the counts as idem_lib says: a replay answers the stored
--          figures), or { -1, refusal } when the request was refused, nothing of it applied:
--          TB_AT_OUT_OF_SPAN (no window holds the event's slot any more), TB_BOARD_FULL ..., TB_QUOTA
--          ... (see admit_items; actorEntries, segmentEntries: GROWTH.refusal)
-- Errors: TB_NO_BOARD, TB_STALE_CONFIG (the whole call: nothing applied)

-- What every request of the running call shares (set by increment): a library-level table, so a call
-- builds none. `no_key`: the idempotency entry of every request without a key (idem_lib reads it,
-- never writes it), its context set by each call. `blocks`: whether the shard may hold a live block
-- (ACTORS.blocking, asked once per call).
local INCREMENT = {
  now_ms = 0,
  now_sec = 0,
  window_count = 0,
  draining = 0,
  keeping = nil,
  add = nil,
  blocks = false,
  holding_at = nil,
  segments_max = 0,
  cap = 0,
  -- Stride 13: each request's group follows its twelve arguments.
  grouped = false,
  -- The allowance every request of a stride-2 call shares (nil at strides 3 and 12: each request's own).
  allowance_arg = nil,
  no_key = { key = '', field = '', fingerprint = '', context = '', ttl_ms = 0, may_store = true },
}

-- A request's growth that cannot be refused: a quota allowing its one item (the service's usual
-- allowance, 1) on a shard without an item cap. Whether its item is new is then told by the add itself
-- (created_by_add) instead of a ZSCORE per window before it. Amounts under 2^53 only, where a sum's
-- float addition is exact enough for that test.
local COUNTED_AFTER = {}

local function counted_after(allowance, cap, amount)
  return cap == 0 and allowance >= 1 and math.abs(amount) < 9007199254740992
end

-- The request's growth in actor contributions and segment entries (GROWTH, counted when a quota is on
-- and it names an actor or segments) past its allowances (`full`: from ARGV[first + 10]): the refusal, or nil.
local function increment_growth_refusal(first, full, covering, at_sec, segments, actor)
  segment_growth.GROWTH.begin()
  if not full or (actor == '' and #segments == 0) then return nil end
  local actors, segment_entries = tonumber(ARGV[first + 10]), tonumber(ARGV[first + 11])
  if not segment_growth.GROWTH.counted(actors, segment_entries) then return nil end
  segment_growth.GROWTH.of_entry(2, INCREMENT.window_count, covering, at_sec, ARGV[first], actor, segments)
  return segment_growth.GROWTH.refusal(actors, segment_entries)
end

-- What refuses one request before it changes anything (nil: admitted), and the new items it creates
-- (COUNTED_AFTER: counted once added): its event time out of every window, a blocked actor, a new
-- segment beyond segments.max, or growth (increment_growth_refusal, admit_items).
local function increment_admission(item, amount, allowance, cap, covering, segments, segments_max, actor_key,
    growth, actor)
  local call = INCREMENT
  if not covering then return 0, 'TB_AT_OUT_OF_SPAN no window holds the slot' end
  local refusal = call.blocks and actor_log.ACTORS.refusal(KEYS[1], actor_key, call.now_ms, item) or nil
  if #segments > 0 then refusal = refusal or segmentation.segment_refusal(KEYS[1], segments, segments_max, call.now_sec) end
  refusal = refusal or growth()
  if refusal then return 0, refusal end
  -- An actor's weight or cap may add another amount than sent: created_by_add would not tell.
  if counted_after(allowance, cap, amount) and not actor_log.ACTORS.weighs(actor) then return COUNTED_AFTER, nil end
  if cap > 0 or allowance >= 0 then return board_write.admit_items(2, call.window_count, { item }, allowance, cap) end
  return 0, nil
end

-- 1 when the item was in no window's results before this request (new on the shard, as admit_items
-- counts), else 0, from the scores the add appended to `reply` from entry `first` (score_1, rank_1,
-- ...): a window holding the event answers exactly `amount` only when it held no score (a sum that
-- reaches 0 is removed, never kept), one not holding it answers the item's standing, 0 when absent.
local function created_by_add(reply, first, window_count, covering, amount)
  for w = 0, window_count - 1 do
    if reply[first + 2 * w] ~= (covering[w] and amount or 0) then return 0 end
  end
  return 1
end

-- Applies one admitted request; answers what idem_finish answers: { 0, context, created, due, new
-- contributions, new segment entries, draining, score_1, rank_1, ..., previous_rank_1, ... }. A request without a key stores nothing, so
-- its answer is built in place, in one table.
local function increment_apply(idem, item, amount, at_ms, at_sec, created_ms_arg, segments, covering, created, actor,
    group)
  local call = INCREMENT
  local window_count = call.window_count
  local keyless = idem == call.no_key
  local reply = keyless and { 0, idem.context, created, 0, segment_growth.GROWTH.actors, segment_growth.GROWTH.segments, call.draining }
    or { call.draining }
  local seen_sec = math.min(at_ms, tonumber(created_ms_arg) or math.huge) / 1000
  local added_due_ms = call.add(reply, item, amount, at_sec, seen_sec, covering, actor)
  groups.assign(KEYS[1], item, group)
  if created == COUNTED_AFTER then
    created = created_by_add(reply, keyless and 8 or 2, window_count, covering, amount)
    if keyless then reply[3] = created end
  end
  local new_due_ms = segmentation.earliest_due(added_due_ms,
    segmentation.segment_add(2, window_count, segments, item, amount, at_sec, covering, seen_sec, actor))
  for w = 0, window_count - 1 do
    reply[#reply + 1] = call.keeping and call.keeping[w] and snapshot.previous_rank(KEYS[3 + 2 * w], item) or 0
  end
  order.append_marks(reply, KEYS, 3, window_count, item)
  new_due_ms = snapshot.with_snapshot_due(new_due_ms, 2, window_count, call.now_sec)
  local due = window.due_to_index(2, window_count, new_due_ms)
  if not keyless then
    return idempotency.idem_finish(KEYS[1], 'cfg', idem, call.now_ms, reply, { created, due, segment_growth.GROWTH.actors, segment_growth.GROWTH.segments })
  end
  reply[4] = due
  return reply
end

-- The allowance argument of the request from ARGV[first]: its own (strides 12 and 3), or its call's
-- (stride 2, INCREMENT.allowance_arg).
local function allowance_arg_of(first, full)
  if full then return ARGV[first + 5] end
  return INCREMENT.allowance_arg or ARGV[first + 2]
end

-- A plain request (stride 3, or 2 with the call's allowance) from ARGV[first] added through `slot_keys`
-- (plain_slots: every window's slot of now indexed, none watched) on a shard where nothing can refuse it:
-- no item cap, no live block, and an allowance no single item passes ("1", or "-1": no quota; "0" may
-- refuse a new item). Appends its record to `answers` (-1, created, score_1, rank_1, ...: no snapshots
-- are kept, so no previous rank; nothing indexed, so no due time) and answers true, or answers false,
-- appending nothing, when it is not such a request.
local function increment_plain(answers, first, slot_keys)
  local allowance_arg = allowance_arg_of(first, false)
  if allowance_arg ~= '1' and allowance_arg ~= '-1' then return false end
  local created_at = #answers + 2
  answers[created_at - 1], answers[created_at] = -1, 0
  local created = board_write.plain_add(answers, slot_keys, INCREMENT.window_count, ARGV[first], ARGV[first + 1])
  if allowance_arg == '1' then answers[created_at] = created end
  return true
end

-- One request from ARGV[first] whose idempotency entry `idem` holds no answer: applied, or refused
-- with nothing of it applied. Answers its answer and 1 when applied, else 0. `full`: its twelve arguments
-- (see the header); else three, the others their defaults.
local function increment_one(first, full, idem)
  local call = INCREMENT
  local item, amount = ARGV[first], tonumber(ARGV[first + 1])
  local allowance = tonumber(allowance_arg_of(first, full))
  local at_ms = full and tonumber(ARGV[first + 6]) or call.now_ms
  local actor, actor_key = actor_log.ACTORS.split(full and ARGV[first + 9] or '')
  local at_sec = math.floor(at_ms / 1000)
  local covering
  if at_sec == call.now_sec then
    covering = window.window_holds(at_sec, call.now_sec, call.window_count)
  else
    -- Per call, not per request: the windows holding each event second before now.
    call.holding_at = call.holding_at or {}
    if call.holding_at[at_sec] == nil then
      call.holding_at[at_sec] = window.window_holds(at_sec, call.now_sec, call.window_count) or false
    end
    covering = call.holding_at[at_sec]
  end
  local segments = segmentation.segment_names(full and ARGV[first + 8] or '')
  local growth = function() return increment_growth_refusal(first, full, covering, at_sec, segments, actor) end
  local created, refusal = increment_admission(item, amount, allowance, call.cap, covering, segments,
    call.segments_max, actor_key, growth, actor)
  if refusal then return { -1, refusal }, 0 end
  return increment_apply(idem, item, amount, at_ms, at_sec, full and ARGV[first + 7] or '', segments, covering,
    created, actor, call.grouped and ARGV[first + 12] or ''), 1
end

local function increment(keys, args)
  call_state.begin_call(keys, args)
  local err = window.version_error(KEYS[1], ARGV[1])
  if err then return redis.error_reply(err) end
  local now_ms = tonumber(ARGV[2])
  local now_sec = math.floor(now_ms / 1000)
  local window_count = tonumber(ARGV[4])
  local confs = snapshot.cross_all(2, window_count, 5, now_sec)
  local draining = window.expire_all(2, window_count, 5, now_sec, tonumber(ARGV[3]))
  slot_due.settle_slot_due()
  local context = ARGV[5 + window.WINDOW_ARGS * window_count]
  local call = INCREMENT
  call.segments_max = tonumber(ARGV[6 + window.WINDOW_ARGS * window_count])
  call.cap = board_write.item_cap(KEYS[1])
  call.now_ms, call.now_sec, call.window_count, call.draining = now_ms, now_sec, window_count, draining
  call.blocks = actor_log.ACTORS.blocking(KEYS[1], now_ms)
  call.keeping, call.add = snapshot.snapshot_windows(2, window_count, confs), board_write.event_adder(window_count)
  call.holding_at = nil
  call.no_key.context = context
  local stride = tonumber(ARGV[7 + window.WINDOW_ARGS * window_count])
  local full = stride >= 12
  call.grouped = stride == 13
  local first_request = 8 + window.WINDOW_ARGS * window_count
  call.allowance_arg = nil
  if stride == 2 then call.allowance_arg, first_request = ARGV[first_request], first_request + 1 end
  -- Plain requests on a shard where nothing can refuse them or be told of them take increment_plain
  -- once the slots of now are indexed (plain_slots): from the first request when the shard's indexed
  -- second names them (most calls under load), else after the first applied one.
  local plain_shard = not full and call.cap == 0 and not call.blocks and call.keeping == nil
  local plain_keys = plain_shard and board_write.plain_slots(window_count, now_sec) or nil
  if full then
    for first = first_request, #ARGV, stride do segmentation.cross_named_segments(2, window_count, segmentation.segment_names(ARGV[first + 8])) end
  end
  local applied = 0
  local answers = { draining }
  for first = first_request, #ARGV, stride do
    if plain_keys and increment_plain(answers, first, plain_keys) then
      applied = applied + 1
    else
      local idem = call.no_key
      if full and ARGV[first + 2] ~= '' then
        idem = idempotency.idem_of(ARGV[first + 2], '', ARGV[first + 3], context, ARGV[first + 4])
      end
      local answer = idempotency.idem_begin(KEYS[1], 'cfg', idem, now_ms)
      if not answer then
        local one
        answer, one = increment_one(first, full, idem)
        applied = applied + one
        if plain_shard and one == 1 and not plain_keys then plain_keys = board_write.plain_slots(window_count, now_sec) end
      end
      local at = #answers
      answers[at + 1] = #answer
      for i = 1, #answer do answers[at + 1 + i] = answer[i] end
    end
  end
  -- The change version counts writes (what the live stream polls): one bump per applied request.
  if applied > 0 then snapshot.bump_version(KEYS[1], applied) end
  return answers
end
