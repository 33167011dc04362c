-- module: actor_blocks
-- requires: actor_log, call_state, hooks, keyspace
-- actor_blocks_lib: what a retraction leaves on a shard (boards with `actors: true`): the blocks that
-- refuse a retracted actor's or item's new events, and the records admin steps keep (a retraction's,
-- a re-weighting's, an alias merge's) with the index a board's drop unlinks them by, an event's actor
-- argument told from its block key (ACTORS.split) and a retracted like's records forgotten. Who contributed
-- what, and the units of a step's work, are actor_lib's.
-- KEYS: 0

local ACTORS = actor_log.ACTORS
local CALL = call_state.CALL
local CONFIG = call_state.CONFIG

-- An event's actor argument: the actor, or "<actor><US><block key>" when the actor's block key (the
-- service's blockKeyOf: NFKC, case-folded, trimmed; ids never hold US) is not the actor itself. Answers
-- the actor as stored and its block key (the actor when none was sent).
function ACTORS.split(arg)
  local cut = string.find(arg, ACTORS.SEP, 1, true)
  if not cut then return arg, arg end
  return string.sub(arg, 1, cut - 1), string.sub(arg, cut + 1)
end

-- Forgets a like ("<item><US><user>" of the shard's likes, the segments recorded with it, and the
-- segments its take-back has left: likes_lib) whose counts a retraction took out.
function ACTORS.forget_like(member)
  redis.call('ZREM', keyspace.sibling_key(CALL.cfg_key, 'cfg', 'likes'), member)
  redis.call('HDEL', keyspace.sibling_key(CALL.cfg_key, 'cfg', 'likesegs'), member)
  redis.call('HDEL', keyspace.sibling_key(CALL.cfg_key, 'cfg', 'liketb'), member)
end

-- Blocks `field` ("a"<US>actor or "i"<US>item) of the shard's blocks until `until_ms` (a later block
-- wins), and moves the config's `blockedUntil` (the latest block's end) to it when later.
function actor_blocks.block_until(cfg_key, field, until_ms)
  local blocked = keyspace.sibling_key(cfg_key, 'cfg', 'blocked')
  if until_ms > (tonumber(redis.call('HGET', blocked, field)) or 0) then redis.call('HSET', blocked, field, until_ms) end
  if until_ms > (tonumber(call_state.config_field(cfg_key, 'blockedUntil')) or 0) then
    redis.call('HSET', cfg_key, 'blockedUntil', until_ms)
    call_state.config_field_written(cfg_key, 'blockedUntil', until_ms)
  end
end

-- Whether the shard may hold a live block at `now_ms`: its config's `blockedUntil` is ahead (absent or
-- past: none, most writes). From the call's config copy (call_lib), no command; a write refusing many
-- events (an increment's coalesced requests) asks once.
function actor_blocks.blocking(cfg_key, now_ms)
  local until_ms
  if cfg_key == CONFIG.cfg_key then
    until_ms = CONFIG.blockedUntil
  else
    until_ms = call_state.config_field(cfg_key, 'blockedUntil')
  end
  return until_ms and (tonumber(until_ms) or 0) > now_ms or false
end

-- The shard's blocks: "<tag>:blocked" hash, "a"<US>actor's block key and "i"<US>item -> until (unix
-- ms), set by a retraction with `block`. Refuses an event whose actor's block key (`actor_key`) or item
-- is blocked: 'TB_RETRACTED <actor|item> <until ms>', else nil. A shard whose config's `blockedUntil` is absent or past (most writes) holds
-- no live block: answered from the call's config copy (call_lib), no command; else one HMGET.
function actor_blocks.refusal(cfg_key, actor_key, now_ms, item)
  if not actor_blocks.blocking(cfg_key, now_ms) then return nil end
  local blocked = redis.call('HMGET', keyspace.sibling_key(cfg_key, 'cfg', 'blocked'), 'a' .. ACTORS.SEP .. (actor_key or ''),
    'i' .. ACTORS.SEP .. (item or ''))
  for i, what in ipairs({ 'actor', 'item' }) do
    local until_ms = tonumber(blocked[i])
    if until_ms and until_ms > now_ms then return 'TB_RETRACTED ' .. what .. ' ' .. until_ms end
  end
  return nil
end

-- The start of a retraction step (retract_step for an actor, retract_item for an item): its record
-- (created once: state, counts, start; gone after KEEP_SEC unless renewed, the key after the windows')
-- and its block. `kind` is 'actor' or 'item'; `asked` the call's id, most (units of work), ledger (the
-- window whose events are counted), block_until_ms, block_key (an actor's block key, an item's id).
function actor_blocks.begin_retraction(kind, now_ms, keys, windows, asked)
  local step = { record = keys[2 + 2 * windows.count], keys = keys, id = asked.id, windows = windows,
    most = ACTORS.step_units(tonumber(asked.most), windows.count), ledger = tonumber(asked.ledger),
    block_until_ms = tonumber(asked.block_until_ms), block_key = asked.block_key }
  if redis.call('HSETNX', step.record, kind, step.id) == 1 then
    redis.call('HSET', step.record, 'state', 'running', 'events', 0, 'amount', 0, 'startedMs', now_ms)
    redis.call('EXPIRE', step.record, ACTORS.KEEP_SEC)
    actor_blocks.hold_record(CALL.cfg_key, step.record, ACTORS.KEEP_SEC, now_ms)
  end
  if step.block_until_ms > now_ms then
    actor_blocks.block_until(CALL.cfg_key, string.sub(kind, 1, 1) .. ACTORS.SEP .. step.block_key, step.block_until_ms)
  end
  return step
end

-- The end of a retraction step: a `done` one's record marked and kept KEEP_SEC more. Answers its totals.
function actor_blocks.end_retraction(record, done, now_ms)
  if done then
    redis.call('HSET', record, 'state', 'done')
    redis.call('EXPIRE', record, ACTORS.KEEP_SEC)
    actor_blocks.hold_record(CALL.cfg_key, record, ACTORS.KEEP_SEC, now_ms)
  end
  local totals = redis.call('HMGET', record, 'events', 'amount')
  return tonumber(totals[1]), tonumber(totals[2])
end

-- The records admin steps keep on a shard (a retraction's "<tag>:ret:<id>", a re-weighting's
-- "<tag>:rw:<digest>", an alias merge's "<tag>:al:<digest>" and "<tag>:alin:<digest>", each with its
-- lists) are indexed in "<tag>:records" (record key -> when it was last held, ms; the index expires with
-- the latest record held), so a board's drop unlinks them with the board: none outlives it, and a board
-- of the same name never reads a record of the one before.
local RECORD_PARTS = { '', ':segs', ':sibs', ':hsibs', ':hsegs' }

-- Notes that `record` is kept `keep_sec` more. The two oldest entries go when their record has expired
-- (Redis' own clock decides, not the service's), so the index never outgrows the records by more than two.
function actor_blocks.hold_record(cfg_key, record, keep_sec, now_ms)
  local index = keyspace.sibling_key(cfg_key, 'cfg', 'records')
  for _, oldest in ipairs(redis.call('ZRANGE', index, 0, 1)) do
    if oldest ~= record and redis.call('EXISTS', oldest) == 0 then redis.call('ZREM', index, oldest) end
  end
  redis.call('ZADD', index, now_ms, record)
  if redis.call('TTL', index) < keep_sec then redis.call('EXPIRE', index, keep_sec) end
end

-- Hook board_dropped: the records the index names with their lists, about `budget` keys at most (one
-- record's at least). Answers the budget left and whether the index is gone.
local function records_dropped(cfg_key, _, budget)
  local index = keyspace.sibling_key(cfg_key, 'cfg', 'records')
  local most = math.max(1, math.floor(budget / #RECORD_PARTS))
  local held, names = redis.call('ZRANGE', index, 0, most - 1), {}
  for _, record in ipairs(held) do
    for _, part in ipairs(RECORD_PARTS) do names[#names + 1] = record .. part end
  end
  if #held > 0 then
    redis.call('UNLINK', unpack(names))
    redis.call('ZREM', index, unpack(held))
  end
  if #held == most then return budget - #names, false end
  redis.call('UNLINK', index)
  return budget - #names - 1, true
end

hooks.register_all('actors', { 'board_dropped', records_dropped })
