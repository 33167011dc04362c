-- requires: actor_blocks, actor_log, board_write, call_state, groups, idempotency, order, previous, prune, reader, segment_growth, segmentation, slot_due, snapshot, window
-- increment: adds amounts to items in every window of a board, expiring what fell out first. One call
-- carries one request or several that arrived together for this shard (WRITE_COALESCE_MS): they are
-- applied one after another in the given order, each exactly as it would be alone: its own
-- idempotency key, event time and growth allowance, its own answer (ranks as of its own addition); a
-- refused request changes nothing while the others go on.
-- Keys: cfg (the board config hash: holds the config version), then per window slots (its slots index
--       zset) and top (its results zset)
-- Args (reader.read_call, CALLS.increment): the board header, then context (stored with each keyed
--       answer: the window names); segments_max (most live segments on this shard; 0: the board takes
--       none); shape (the requests' record shape, RECORD_FIELDS); allowance (the new items each request
--       of shape increment_pair may create; "" otherwise); then the requests as records
--       (reader.record_count), of one shape:
--       increment_full: item; amount (integer, non-zero, written as a decimal integer with no sign but
--         '-', no leading zero or exponent); idem_key ("" for none), idem_fingerprint, idem_retention
--         (ms; negative: no budget to store an answer, see idem_lib); new_items (new items the client
--         may create: 0 or 1; -1: no quota); at_ms (the event's time, unix ms, not after now: it lands
--         in the slot of that time in every window whose live span still holds that slot, and only
--         those); created_ms (the item's creation time, unix ms, or "" for none: a hot view's firstSeen
--         is the earliest of the item's event and creation times); segments (the segments it also
--         counts in, joined by commas, "" for none; see segment_lib); actor ("" for none; with its
--         block key when that differs, ACTORS.split; a blocked actor or item refuses the request,
--         TB_RETRACTED <actor|item> <until ms>); new_actor_entries, new_segment_entries (what the client
--         may create: -1, no quota; GROWTH, segment_lib)
--       increment_grouped: increment_full and the item's group ("" none: unchanged; groups_lib)
--       increment_plain: item, amount and new_items, each request without a key, at now (the caller
--         may send an event of now's second so on a board without views: only a view reads an event's
--         time finer than its second), with no creation time, segments or actor (a call of plain
--         requests, most: fewer arguments to pass and to turn into Lua strings)
--       increment_pair: item and amount, the same plain requests sharing their allowance (most such calls)
-- Reply (reader.answer, CALLS.increment): draining (0|1), then the answers as records after it: flat, no
--       table per request (a nested answer per request cost Redis about a sixth of a plain request's time
--       to build and encode, and the service as much to decode), one record per request, in order:
--       0 for a request not applied: the call's work passed WORK_BUDGET before it (never the first request);
--       -1 and a plain request's answer (increment_plain, RECORD_FIELDS.increment_plain_answer: created,
--         scores, ranks), its other figures implied (outcome 0, the call's context, due time 0, no
--         previous ranks);
--       or n, then the request's answer of n entries: idem_lib's outcome, context and, applied only, new
--         items created, due time for the index (unix ms, 0: none; see due_to_index), new actor
--         contributions, new segment entries; then RECORD_FIELDS.increment_answer: draining, scores,
--         ranks, previous_ranks, marks (board_write.standing_fields: rank 0, not ranked; previous rank:
--         in the window's latest snapshot, 0 when absent or the window keeps none; marks on a sharded
--         `ties: first` board only, "" where not ranked); a replay answers the stored figures; or
--         { -1, refusal } when the request was refused, nothing of it applied: TB_AT_OUT_OF_SPAN (no
--         window holds the event's slot any more), TB_BOARD_FULL ..., TB_QUOTA ... (see admit_items;
--         actorEntries, segmentEntries: GROWTH.refusal)
-- Errors: TB_NO_BOARD, TB_STALE_CONFIG (the whole call: nothing applied)

-- The work a call does before it leaves the requests after it to the next call (call_state.CALL.work, weighed by
-- what counts inside Redis: moderation_lib's WORK, the exceptions ahead of each window's rank, which the service's
-- units, WRITE_COST_PER_CALL, do not see). 24: 3 mid-table requests of an 8-window board at the moderation maxima
-- (8 each, counted in the windows' kept indexes; the few indexes a call builds before it applies weigh 3 each). Such
-- a call costs about 2.4 M Redis instructions of its own and 1.8 M a request (bench/write-instructions.ts: 1 request
-- 4.24 M, 3 7.75 M, 4 9.53 M), and a step of Lua's collector falling inside it adds up to ~2.5 M: 3 requests stay
-- near 10 M with one, 4 reach 11-12 M.
local WORK_BUDGET = 24

-- What every request of the running call shares (set by increment): a library-level table, so a call
-- builds none. `no_key`: the idempotency entry of every request without a key (idem_lib reads it,
-- never writes it), its context set by each call. `blocks`: whether the shard may hold a live block
-- (actor_blocks.blocking, asked once per call).
local INCREMENT = {
  keys = nil,
  cfg_key = nil,
  now_ms = 0,
  now_sec = 0,
  window_count = 0,
  -- The call's windows (call_state.bind_windows).
  windows = nil,
  draining = 0,
  keeping = nil,
  add = nil,
  blocks = false,
  holding_at = nil,
  segments_max = 0,
  cap = 0,
  -- Shape increment_grouped: each request names its group.
  grouped = false,
  -- The allowance every request of an increment_pair call shares (nil otherwise: each request's own).
  allowance_arg = nil,
  -- The request being read, by shape (reader.fill_record refills it from request to request).
  rows = {},
  -- A plain request's figures, the call's answers and its named reply, refilled by each (Redis reads a
  -- reply as the function returns, before any other call): no table per plain request or call, nor
  -- the resizes of a new answers table as it grows (each allocation costs Lua's collector several times its making).
  plain_flat = {},
  answers = {},
  reply = { draining = 0 },
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
-- and it names an actor or segments) past its allowances (`full`: its own): the refusal, or nil.
local function increment_growth_refusal(request, full, covering, at_sec, segments, actor)
  segment_growth.GROWTH.begin()
  if not full or (actor == '' and #segments == 0) then return nil end
  local actors, segment_entries = tonumber(request.new_actor_entries), tonumber(request.new_segment_entries)
  if not segment_growth.GROWTH.counted(actors, segment_entries) then return nil end
  segment_growth.GROWTH.of_entry(INCREMENT.windows, covering, at_sec, request.item, actor, segments)
  return segment_growth.GROWTH.refusal(actors, segment_entries)
end

-- What refuses one request before it changes anything (nil: admitted), and the new items it creates
-- (COUNTED_AFTER: counted once added): its event time out of every window, a blocked actor, a new
-- segment beyond segments.max, or growth (increment_growth_refusal, admit_items).
local function increment_admission(item, amount, allowance, cap, covering, segments, segments_max, actor_key,
    growth, actor)
  local call = INCREMENT
  if not covering then return 0, 'TB_AT_OUT_OF_SPAN no window holds the slot' end
  local refusal = call.blocks and actor_blocks.refusal(call.cfg_key, actor_key, call.now_ms, item) or nil
  if #segments > 0 then refusal = refusal or segmentation.segment_refusal(call.cfg_key, segments, segments_max, call.now_sec) end
  refusal = refusal or growth()
  if refusal then return 0, refusal end
  prune.settle(call.cfg_key, item)
  -- An actor's weight or cap may add another amount than sent: created_by_add would not tell.
  if counted_after(allowance, cap, amount) and not actor_log.ACTORS.weighs(actor) then return COUNTED_AFTER, nil end
  if cap > 0 or allowance >= 0 then return board_write.admit_items(call.windows, { item }, allowance, cap) end
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

-- The named answer of an applied request (RECORD_FIELDS.increment_answer) appended to `answer` from
-- the figures `flat` holds (score_1, rank_1, ..., previous ranks, marks).
local function standing_answer(answer, flat, window_count)
  local scores, ranks, previous_ranks, marks = board_write.standing_fields(flat, 1, window_count)
  return reader.record_of(RECORD_FIELDS.increment_answer, { draining = INCREMENT.draining, scores = scores,
    ranks = ranks, previous_ranks = previous_ranks, marks = marks }, answer)
end

-- Applies one admitted request; answers what idem_finish answers: { 0, context, what it created (by
-- the contract's `created` names), then the named answer (standing_answer) }.
local function increment_apply(idem, item, amount, at_ms, at_sec, created_ms_arg, segments, covering, created, actor,
    group)
  local call = INCREMENT
  local window_count = call.window_count
  local keys = call.keys
  local flat = {}
  local seen_sec = math.min(at_ms, tonumber(created_ms_arg) or math.huge) / 1000
  -- A tie mark at most for each window (ties_lib takes their sequence numbers at once).
  call_state.CALL.marks_ahead = window_count
  local added_due_ms = call.add(flat, item, amount, at_sec, seen_sec, covering, actor)
  groups.assign(call.cfg_key, item, group)
  if created == COUNTED_AFTER then created = created_by_add(flat, 1, window_count, covering, amount) end
  local new_due_ms = segmentation.earliest_due(added_due_ms,
    segmentation.segment_add(call.windows, segments, item, amount, at_sec, covering, seen_sec, actor))
  for w = 0, window_count - 1 do
    flat[#flat + 1] = call.keeping and call.keeping[w] and previous.rank_of(keys[3 + 2 * w], item) or 0
  end
  order.append_marks(flat, keys, 3, window_count, item)
  new_due_ms = snapshot.with_snapshot_due(new_due_ms, call.windows, call.now_sec)
  local due = slot_due.due_to_index(call.windows, new_due_ms)
  local growth = segment_growth.GROWTH
  local made = { items = created, due_ms = due, actor_entries = growth.actors, segment_entries = growth.segments }
  if idem ~= call.no_key then
    return idempotency.idem_finish(call.cfg_key, 'cfg', idem, call.now_ms, standing_answer({}, flat, window_count),
      reader.record_of(CALLS.increment.created, made, {}))
  end
  -- A request without a key stores nothing: its answer is built in place, in one table.
  return standing_answer(reader.record_of(CALLS.increment.created, made, { 0, idem.context }), flat, window_count)
end

-- Where the plain shapes' fields and a plain answer's fields are (reader.field_offsets, by the
-- contract's names): the plain path reads and writes them by index, with no table or call per field.
local PAIR_AT = reader.field_offsets(RECORD_FIELDS.increment_pair)
local PLAIN_AT = reader.field_offsets(RECORD_FIELDS.increment_plain)
local PLAIN_ANSWER_AT = reader.field_offsets(RECORD_FIELDS.increment_plain_answer)

-- A plain request (increment_plain or increment_pair: `item`, `amount`, `allowance_arg` as sent) added
-- through `slot_keys` (plain_slots: every window's slot of now indexed, none watched) on a shard where
-- nothing can refuse it: no item cap, no live block, and an allowance no single item passes ("1", or
-- "-1": no quota; "0" may refuse a new item). Appends its record to `answers` (-1, then
-- RECORD_FIELDS.increment_plain_answer: created, scores, ranks; no snapshots are kept, so no previous
-- rank; nothing indexed, so no due time) and answers true, or answers false, appending nothing, when it
-- is not such a request.
local function increment_plain(answers, item, amount, allowance_arg, slot_keys)
  if allowance_arg ~= '1' and allowance_arg ~= '-1' then return false end
  local window_count = INCREMENT.window_count
  local flat = INCREMENT.plain_flat
  local created = board_write.plain_add(flat, slot_keys, INCREMENT.windows, item, amount)
  local first = #answers + 2
  answers[first - 1] = -1
  answers[first + PLAIN_ANSWER_AT.created] = allowance_arg == '1' and created or 0
  local scores_at, ranks_at = first + PLAIN_ANSWER_AT.scores, first + PLAIN_ANSWER_AT.ranks
  -- One window (most boards): its score and rank as they are, without joining.
  if window_count == 1 then
    answers[scores_at], answers[ranks_at] = flat[1], flat[2]
  else
    answers[scores_at], answers[ranks_at] = board_write.pair_fields(flat, 1, window_count)
  end
  return true
end

-- The windows holding the event second `at_sec`: per call, not per request, for a second before now.
local function covering_of(at_sec)
  local call = INCREMENT
  if at_sec == call.now_sec then return window.window_holds(at_sec, call.now_sec, call.windows) end
  call.holding_at = call.holding_at or {}
  if call.holding_at[at_sec] == nil then
    call.holding_at[at_sec] = window.window_holds(at_sec, call.now_sec, call.windows) or false
  end
  return call.holding_at[at_sec]
end

-- One request (`request`, read by name) whose idempotency entry `idem` holds no answer: applied, or
-- refused with nothing of it applied. Answers its answer and 1 when applied, else 0. `full`: a request
-- of every field (increment_full, increment_grouped); else a plain one, the others their defaults.
local function increment_one(request, full, idem)
  local call = INCREMENT
  local item, amount = request.item, tonumber(request.amount)
  local allowance = tonumber(call.allowance_arg or request.new_items)
  local at_ms = full and tonumber(request.at_ms) or call.now_ms
  local actor, actor_key = actor_log.ACTORS.split(full and request.actor or '')
  local at_sec = math.floor(at_ms / 1000)
  local covering = covering_of(at_sec)
  local segments = segmentation.segment_names(full and request.segments or '')
  local growth = function() return increment_growth_refusal(request, full, covering, at_sec, segments, actor) end
  local created, refusal = increment_admission(item, amount, allowance, call.cap, covering, segments,
    call.segments_max, actor_key, growth, actor)
  if refusal then return { -1, refusal }, 0 end
  return increment_apply(idem, item, amount, at_ms, at_sec, full and request.created_ms or '', segments, covering,
    created, actor, call.grouped and request.group or ''), 1
end

-- Binds the call's state (INCREMENT) for its requests: keys, time, windows, the shard's cap, blocks,
-- snapshots and adder, the requests' shape. Answers the table its requests are read into.
local function increment_begin(keys, header, arg, draining, confs, windows)
  local call = INCREMENT
  local window_count = header.window_count
  call.keys, call.cfg_key = keys, keys[1]
  call.segments_max = reader.memo_number(arg.segments_max)
  -- A config without maxItems (most boards) has no cap: item_cap not asked.
  call.cap = call_state.CONFIG.maxItems and board_write.item_cap(call.cfg_key) or 0
  call.now_ms, call.now_sec, call.window_count, call.draining = header.now_ms, header.now_sec, window_count, draining
  call.blocks = actor_blocks.blocking(call.cfg_key, header.now_ms)
  call.windows = windows
  call.keeping, call.add = confs and snapshot.snapshot_windows(windows, confs), board_write.event_adder(windows)
  call.holding_at = nil
  call.no_key.context = arg.context
  call.grouped = arg.shape == 'increment_grouped'
  call.allowance_arg = arg.shape == 'increment_pair' and arg.allowance or nil
  local row = call.rows[arg.shape] or {}
  call.rows[arg.shape] = row
  return row
end

-- One request's record appended to `answers`: its length and its answer (a replay's, or
-- increment_one's). Answers 1 when applied, else 0.
local function increment_request(answers, request, full)
  local call = INCREMENT
  local idem = call.no_key
  if full and request.idem_key ~= '' then
    idem = idempotency.idem_of(request, '', call.no_key.context)
  end
  local answer = idempotency.idem_begin(call.cfg_key, 'cfg', idem, call.now_ms)
  local one = 0
  if not answer then answer, one = increment_one(request, full, idem) end
  local at = #answers
  answers[at + 1] = #answer
  for i = 1, #answer do answers[at + 1 + i] = answer[i] end
  return one
end

local function increment(keys, args)
  local cfg_key = keys[1]
  local header, arg, records_at = call_state.begin_named_call(keys, args, CALLS.increment)
  call_state.CALL.writes = true
  local err = window.version_error(cfg_key, header.version)
  if err then return redis.error_reply(err) end
  local now_sec = header.now_sec
  local windows = call_state.bind_windows(2, header.window_count)
  local confs, draining = snapshot.open_write(windows, header)
  local request = increment_begin(keys, header, arg, draining, confs, windows)
  local call = INCREMENT
  local fields = RECORD_FIELDS[arg.shape]
  local count = reader.record_count(args, records_at, fields)
  local full = call.grouped or arg.shape == 'increment_full'
  -- Plain requests on a shard where nothing can refuse them or be told of them take increment_plain
  -- once the slots of now are indexed (plain_slots): from the first request when the shard's indexed
  -- second names them (most calls under load), else after the first applied one.
  local plain_shard = not full and call.cap == 0 and not call.blocks and call.keeping == nil
  local plain_keys = plain_shard and board_write.plain_slots(windows, now_sec) or nil
  if full then
    for r = 1, count do
      reader.fill_record(request, args, records_at, fields, r)
      segmentation.cross_named_segments(windows, segmentation.segment_names(request.segments))
    end
  end
  -- A plain request's fields by index (PAIR_AT, PLAIN_AT): item, amount, and its own allowance
  -- (increment_plain; an increment_pair call's is shared).
  local at_of = arg.shape == 'increment_pair' and PAIR_AT or PLAIN_AT
  local item_at, amount_at, allowance_at = at_of.item, at_of.amount, at_of.new_items
  local applied, answers, width = 0, call.answers, #fields
  for i = #answers, 1, -1 do answers[i] = nil end
  -- The reply's named fields first (reader.answer fills them), the answers' records after them.
  answers[1] = 0
  for r = 1, count do
    -- Past the call's budget the requests left are answered 0 (not applied, sent again in the next call);
    -- the first is always applied.
    if r > 1 and call_state.CALL.work >= WORK_BUDGET then
      for _ = r, count do answers[#answers + 1] = 0 end
      break
    end
    local item, amount, own_allowance = reader.record_values(args, records_at, width, r, item_at, amount_at, allowance_at)
    local one = 1
    if not (plain_keys and increment_plain(answers, item, amount, call.allowance_arg or own_allowance, plain_keys)) then
      one = increment_request(answers, reader.fill_record(request, args, records_at, fields, r), full)
    end
    applied = applied + one
    if plain_shard and one == 1 and not plain_keys then plain_keys = board_write.plain_slots(windows, now_sec) end
  end
  -- The change version counts writes (what the live stream polls): one bump per applied request.
  if applied > 0 then snapshot.bump_version(cfg_key, applied) end
  call.reply.draining = draining
  return reader.answer(CALLS.increment, call.reply, answers)
end
