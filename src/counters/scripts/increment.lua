-- requires: idempotency, keyspace
-- counter_increment: adds a count to the slice of `at` at every precision whose retention still
-- covers it, and lists "<prec>:<name>" in the bucket's known index for each of those precisions, in
-- one atomic step (so the cleaner never sees data outside the index).
-- A slice start s is live when s > now - samples * prec (the N newest slices, the current one included).
-- Growth: the bucket's names zset ({...}:names, derived from KEYS[1]) holds name -> the time (ms, the
-- caller's clock) its newest slice leaves every retention: the counter is live until then. A write that
-- would make a counter live again (a new one) is refused past the bucket's cap or the client's allowance,
-- before anything is written. Each count hash expires (relative to the caller's clock) a grace after its
-- newest slice leaves its retention, so a counter that stops receiving data goes away without the
-- cleaner. The expiry is garbage collection only: reads and the cleaner apply the retention by the
-- caller's clock, and Redis counts a TTL on its own, so without the grace an instance whose clock
-- lags the writer's (or a test's clock, which stands still) would see a live slice vanish early.
-- KEYS: dynamic
-- KEYS[1]        the bucket's known-counters index zset ("<prec>:<name>" -> 0)
-- KEYS[1+i]      (i = 1..P) the counter's count hash of precision i (slice start -> count)
-- ARGV[1]        now, unix milliseconds
-- ARGV[2]        samples kept per precision (count)
-- ARGV[3]        at: the sample's time, unix seconds (integer)
-- ARGV[4]        count to add (integer)
-- ARGV[5]        counter name
-- ARGV[6] .. ARGV[9]: idempotency key ("" for none), request fingerprint, context, retention (ms)
--                (idem_lib; the key is scoped to the counter: its field is "<name>\31<key>")
-- ARGV[10]       new counters the client may create (0 or 1; -1: no quota)
-- ARGV[11]       most live counters in this bucket (0: no cap)
-- ARGV[12]       expiry grace, ms: how long a count hash outlives its newest slice's retention
-- ARGV[12+i]     precision i, seconds
-- Reply: { outcome, context, [new counters created: applied only], prec, ... } the precisions
--        (seconds) the count landed in (outcome, context and the count: see idem_lib);
--        { 0, context, 0 } and nothing stored when every retention is past `at` (a refusal: a retry
--        with the key is judged again)
-- Errors: TB_QUOTA counters 1, TB_CAPACITY <live> <cap> 1 (nothing applied)

-- A counter listed in no names entry may predate them: its index entries say whether it exists.
local function counter_known_before(keys, args, name)
  for i = 1, #keys - 1 do
    if redis.call('ZSCORE', keys[1], args[12 + i] .. ':' .. name) then return true end
  end
  return false
end

-- The slice start of `at` at each precision whose retention still covers it (by key position), the
-- precisions (s) landed in, and the time (ms) the newest of those slices leaves its retention.
local function counter_slices(keys, args, at, now_sec, samples)
  local landed, starts, live_until_ms = {}, {}, 0
  for i = 1, #keys - 1 do
    local prec = tonumber(args[12 + i])
    local start = at - (at % prec)
    if start > now_sec - samples * prec then
      landed[#landed + 1] = prec
      starts[i] = start
      live_until_ms = math.max(live_until_ms, (start + samples * prec) * 1000)
    end
  end
  return landed, starts, live_until_ms
end

-- 1 when the write makes the counter live (new), 0 when it is live already; a redis error reply when
-- the bucket's cap or the client's allowance refuses a new one.
local function counter_admit(keys, args, name, names_key, now_ms)
  local live = redis.call('ZSCORE', names_key, name)
  local is_new
  if live then is_new = tonumber(live) <= now_ms else is_new = not counter_known_before(keys, args, name) end
  if not is_new then return 0 end
  local cap = tonumber(args[11])
  if cap > 0 then
    local held = redis.call('ZCOUNT', names_key, '(' .. now_ms, '+inf')
    if held >= cap then return nil, redis.error_reply('TB_CAPACITY ' .. held .. ' ' .. cap .. ' 1') end
  end
  if tonumber(args[10]) == 0 then return nil, redis.error_reply('TB_QUOTA counters 1') end
  return 1
end

local function increment(keys, args)
  local now_ms = tonumber(args[1])
  local samples = tonumber(args[2])
  local at = tonumber(args[3])
  local count = tonumber(args[4])
  local name = args[5]
  local idem = idempotency.idem_of(args[6], name .. '\31', args[7], args[8], args[9])
  local replay = idempotency.idem_begin(keys[1], 'known', idem, now_ms)
  if replay then return replay end
  local names_key = keyspace.sibling_key(keys[1], 'known', 'names')
  local landed, starts, live_until_ms = counter_slices(keys, args, at, math.floor(now_ms / 1000), samples)
  local grace_ms = tonumber(args[12])
  if #landed == 0 then return { 0, idem.context, 0 } end
  local created, refusal = counter_admit(keys, args, name, names_key, now_ms)
  if refusal then return refusal end
  for i = 1, #keys - 1 do
    local start = starts[i]
    if start then
      local prec = tonumber(args[12 + i])
      redis.call('HINCRBY', keys[1 + i], string.format('%d', start), count)
      redis.call('ZADD', keys[1], 0, string.format('%d', prec) .. ':' .. name)
      -- Only ever later: a late sample must not shorten the life of newer slices.
      local ttl_ms = (start + samples * prec) * 1000 - now_ms + grace_ms
      local current_ms = redis.call('PTTL', keys[1 + i])
      if current_ms < 0 or current_ms < ttl_ms then redis.call('PEXPIRE', keys[1 + i], ttl_ms) end
    end
  end
  redis.call('ZADD', names_key, 'GT', live_until_ms, name)
  return idempotency.idem_finish(keys[1], 'known', idem, now_ms, landed, { created })
end
