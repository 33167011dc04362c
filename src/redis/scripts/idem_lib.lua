-- module: idempotency
-- requires: keyspace
-- idem_lib: retry-safe writes, prepended (after keys_lib) to every write script and a module (after
-- keys_lib) of every function library that writes. The write's own
-- script looks its idempotency key up, applies the write and stores its reply in the same call, so
-- no duplicate can slip between check and apply, whatever instance a retry reaches.
-- Entries live in time buckets under the tag of what they protect: hash <base>idem:<bucket> (one
-- bucket per half of the retention), field = the key, value = fingerprint, time, context and reply.
-- A bucket key expires by itself once no lookup can reach it, so nothing ever scans the keyspace; a
-- lookup reads the 4 buckets the retention (and half a retention of clock skew) covers. Two buckets
-- per retention keep a lookup cheap; an entry's memory is freed between 1 and 1.5 retentions after it
-- was stored (its time, stored with it, decides the retention exactly).
-- KEYS: 0
-- Every retry-safe function reads the same four named arguments (IDEM_FIELDS in src/redis/idempotency.ts,
-- read by the reader with the call's own): idem_key ("" for a write without one; the app scopes a
-- client's key to that client before it gets here), idem_fingerprint (of the request), idem_context
-- (what the app wants back on a replay to rebuild the answer byte for byte) and idem_retention (ms,
-- negative when the client has no budget left to store a new answer, quota idempotentAnswers: such a
-- write only replays). A call of several requests (the increment) reads them from each request's record
-- but idem_context, which the call's header holds for all of them.
-- Every idempotent script replies { outcome, context, <its own reply...> }: outcome 0 applied,
-- 1 replayed (nothing applied; the stored reply follows), 2 refused (the key was used for another
-- request; nothing follows), 3 refused (no stored answer and no budget to store one: nothing
-- applied, nothing follows). A script that creates entries (items, likes, counters) also answers,
-- when applied only, how many of each kind it created, between the context and its own reply: they
-- are never stored, because a replay creates nothing (the quotas charge what was created).

local IDEM_SEP = '\31'
local IDEM_BUCKETS = 2

-- The idempotency table of a write from `fields`, its named arguments (a call's, or a request's record):
-- key, field (the key under `field_prefix`), fingerprint, context (`context` when given, else the
-- fields'), retention and whether a new answer may be stored (the sign of the retention).
local function idem_of(fields, field_prefix, context)
  local key, ttl_ms = fields.idem_key, tonumber(fields.idem_retention)
  return {
    key = key,
    -- A write without a key looks nothing up: no field to make.
    field = key ~= '' and field_prefix .. key or '',
    fingerprint = fields.idem_fingerprint,
    context = context or fields.idem_context,
    ttl_ms = math.abs(ttl_ms),
    may_store = ttl_ms >= 0,
  }
end

local function idem_bucket_ms(idem)
  return math.max(1, math.ceil(idem.ttl_ms / IDEM_BUCKETS))
end

local function idem_split(entry)
  local parts, from = {}, 1
  while true do
    local at = string.find(entry, IDEM_SEP, from, true)
    if not at then
      parts[#parts + 1] = string.sub(entry, from)
      return parts
    end
    parts[#parts + 1] = string.sub(entry, from, at - 1)
    from = at + 1
  end
end

-- A reply to answer at once (the stored one, or a refusal of a reused key), or nil: apply the write.
-- `base_key` is a key of the protected scope ending in `suffix`; the buckets are its siblings.
local function idem_begin(base_key, suffix, idem, now_ms)
  if idem.key == '' then return nil end
  local current = math.floor(now_ms / idem_bucket_ms(idem))
  for bucket = current + 1, current - IDEM_BUCKETS, -1 do
    local entry = redis.call('HGET', keyspace.sibling_key(base_key, suffix, 'idem:' .. bucket), idem.field)
    local parts = entry and idem_split(entry)
    -- An entry past the retention is as good as gone (its bucket only lingers until it expires).
    if parts and now_ms - tonumber(parts[2]) < idem.ttl_ms then
      if parts[1] ~= idem.fingerprint then return { 2, '' } end
      local reply = { 1, parts[3] }
      for i = 4, #parts do
        local kind, value = string.sub(parts[i], 1, 1), string.sub(parts[i], 2)
        if kind == 'n' then reply[#reply + 1] = tonumber(value) else reply[#reply + 1] = value end
      end
      return reply
    end
  end
  if not idem.may_store then return { 3, '' } end
  return nil
end

-- Appends `values` (nil: none) to `list` up to its first nil, as ipairs would, without a call per
-- value: every idempotent write answers through here.
local function append_values(list, values)
  if values == nil then return end
  local n, i = #list, 1
  local value = values[1]
  while value ~= nil do
    n = n + 1
    list[n] = value
    i = i + 1
    value = values[i]
  end
end

-- Stores the write's reply under its key (when it has one) and answers { 0, context, created...,
-- reply... } (`created`: optional counts of what the call created, answered but not stored).
-- Numbers keep every digit (%.17g) and come back as numbers; strings come back as strings.
local function idem_finish(base_key, suffix, idem, now_ms, reply, created)
  local answer = { 0, idem.context }
  append_values(answer, created)
  append_values(answer, reply)
  if idem.key ~= '' then
    local parts = { idem.fingerprint, string.format('%d', now_ms), idem.context }
    for _, value in ipairs(reply) do
      if type(value) == 'number' then
        parts[#parts + 1] = 'n' .. string.format('%.17g', value)
      else
        parts[#parts + 1] = 's' .. value
      end
    end
    local size = idem_bucket_ms(idem)
    local current = math.floor(now_ms / size)
    local bucket_key = keyspace.sibling_key(base_key, suffix, 'idem:' .. current)
    redis.call('HSET', bucket_key, idem.field, table.concat(parts, IDEM_SEP))
    -- Relative to the caller's clock: the bucket outlives the last lookup that can reach it.
    redis.call('PEXPIRE', bucket_key, (current + IDEM_BUCKETS + 1) * size - now_ms)
  end
  return answer
end

-- Deletes every bucket a lookup at `now_ms` could read (a deleted board must not replay into a new one).
local function idem_forget(base_key, suffix, now_ms, ttl_ms)
  local size = idem_bucket_ms({ ttl_ms = ttl_ms })
  local current = math.floor(now_ms / size)
  for bucket = current + 1, current - IDEM_BUCKETS, -1 do
    redis.call('UNLINK', keyspace.sibling_key(base_key, suffix, 'idem:' .. bucket))
  end
end

idempotency.idem_of = idem_of
idempotency.idem_begin = idem_begin
idempotency.idem_finish = idem_finish
idempotency.idem_forget = idem_forget
