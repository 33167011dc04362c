-- requires: counters, idempotency, keyspace, reader
-- counter_increment: adds a count to the slice of `at` at every precision whose retention still
-- covers it, and lists "<prec>:<name>" in the bucket's known index for each of those precisions, in
-- one atomic step (so the cleaner never sees data outside the index).
-- A slice start s is live when s > now - samples * prec (the N newest slices, the current one included).
-- Growth: the bucket's names zset ({...}:names, derived from the known key) holds name -> the time (ms,
-- the caller's clock) its newest slice leaves every retention: the counter is live until then. A write
-- that would make a counter live again (a new one) is refused past the bucket's cap or the client's
-- allowance, before anything is written. Each count hash expires (relative to the caller's clock) a
-- grace after its newest slice leaves its retention, so a counter that stops receiving data goes away
-- without the cleaner. The expiry is garbage collection only: reads and the cleaner apply the retention
-- by the caller's clock, and Redis counts a TTL on its own, so without the grace an instance whose
-- clock lags the writer's (or a test's clock, which stands still) would see a live slice vanish early.
-- Keys: known (the bucket's known-counters index zset, "<prec>:<name>" -> 0), then the counter's count
--   hash (slice start -> count) of each precision, in the order of `precisions`
-- Args (reader.read_call, CALLS.increment): the header (no version, now, no windows), then
--   samples       samples kept per precision (count)
--   at_sec        the sample's time, unix seconds (integer)
--   count         count to add (integer)
--   name          counter name
--   idem_key, idem_fingerprint, idem_context, idem_retention   idem_lib's (idem_key "": none; the key
--                 is scoped to the counter: its field is "<name>\31<key>")
--   new_counters  new counters the client may create (0 or 1; -1: no quota)
--   bucket_cap    most live counters in this bucket (0: no cap)
--   grace_ms      how long a count hash outlives its newest slice's retention
--   precisions    every configured precision (s), joined by commas, one per count hash
-- Reply (reader.answer, CALLS.increment, after idem_lib's outcome, context and, applied only, the new
--   counters created): landed, the precisions (s) the count landed in joined by commas ("" and
--   nothing stored when every retention is past `at`: a refusal, a retry with the key is judged again)
-- Errors: TB_QUOTA counters 1, TB_CAPACITY <live> <cap> 1 (nothing applied)

-- A counter listed in no names entry may predate them: its index entries say whether it exists.
local function counter_known_before(known_key, texts, name)
  for i = 1, #texts do
    if redis.call('ZSCORE', known_key, texts[i] .. ':' .. name) then return true end
  end
  return false
end

-- The slice start of `at` at each precision whose retention still covers it (by precision position),
-- the precisions landed in (their texts), and the time (ms) the newest of those slices leaves its
-- retention.
local function counter_slices(precisions, texts, at, now_sec, samples)
  local landed, starts, live_until_ms = {}, {}, 0
  for i = 1, #precisions do
    local prec = precisions[i]
    local start = at - (at % prec)
    if start > now_sec - samples * prec then
      landed[#landed + 1] = texts[i]
      starts[i] = start
      live_until_ms = math.max(live_until_ms, (start + samples * prec) * 1000)
    end
  end
  return landed, starts, live_until_ms
end

-- 1 when the write makes the counter live (new), 0 when it is live already; a redis error reply when
-- the bucket's cap or the client's allowance refuses a new one.
local function counter_admit(known_key, arg, texts, names_key, now_ms)
  local name = arg.name
  local live = redis.call('ZSCORE', names_key, name)
  local is_new
  if live then is_new = tonumber(live) <= now_ms else is_new = not counter_known_before(known_key, texts, name) end
  if not is_new then return 0 end
  local cap = tonumber(arg.bucket_cap)
  if cap > 0 then
    local held = redis.call('ZCOUNT', names_key, '(' .. now_ms, '+inf')
    if held >= cap then return nil, redis.error_reply('TB_CAPACITY ' .. held .. ' ' .. cap .. ' 1') end
  end
  if tonumber(arg.new_counters) == 0 then return nil, redis.error_reply('TB_QUOTA counters 1') end
  return 1
end

local function increment(keys, args)
  local known_key = keys[1]
  local header, arg = reader.read_call(args, CALLS.increment)
  local now_ms, samples, name = header.now_ms, tonumber(arg.samples), arg.name
  local idem = idempotency.idem_of(arg, name .. '\31')
  local replay = idempotency.idem_begin(known_key, 'known', idem, now_ms)
  if replay then return replay end
  local precisions, texts = counters.precisions_of(arg.precisions)
  local names_key = keyspace.sibling_key(known_key, 'known', 'names')
  local landed, starts, live_until_ms = counter_slices(precisions, texts, tonumber(arg.at_sec), header.now_sec, samples)
  if #landed == 0 then
    -- A refusal: outcome 0 with no counter created, and not stored (a retry with the key is judged again).
    return { 0, idem.context, 0, unpack(reader.answer(CALLS.increment, { landed = '' })) }
  end
  local created, refusal = counter_admit(known_key, arg, texts, names_key, now_ms)
  if refusal then return refusal end
  local count, grace_ms = tonumber(arg.count), tonumber(arg.grace_ms)
  for i = 1, #precisions do
    local start = starts[i]
    if start then
      local prec, count_key = precisions[i], keys[1 + i]
      redis.call('HINCRBY', count_key, string.format('%d', start), count)
      redis.call('ZADD', known_key, 0, texts[i] .. ':' .. name)
      -- Only ever later: a late sample must not shorten the life of newer slices.
      local ttl_ms = (start + samples * prec) * 1000 - now_ms + grace_ms
      local current_ms = redis.call('PTTL', count_key)
      if current_ms < 0 or current_ms < ttl_ms then redis.call('PEXPIRE', count_key, ttl_ms) end
    end
  end
  redis.call('ZADD', names_key, 'GT', live_until_ms, name)
  local reply = reader.answer(CALLS.increment, { landed = table.concat(landed, ',') })
  return idempotency.idem_finish(known_key, 'known', idem, now_ms, reply, reader.record_of(CALLS.increment.created, { counters = created }, {}))
end
