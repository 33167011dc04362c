-- counter_increment: adds a count to the slice of `at` at every precision whose retention still
-- covers it, and lists "<prec>:<name>" in the bucket's known index for each of those precisions, in
-- one atomic step (so the cleaner never sees data outside the index).
-- A slice start s is live when s > now - samples * prec (the N newest slices, the current one included).
-- Growth: the bucket's names zset ({...}:names, derived from KEYS[1]) holds name -> the time (ms, the
-- caller's clock) its newest slice leaves every retention: the counter is live until then. A write that
-- would make a counter live again (a new one) is refused past the bucket's cap or the client's allowance,
-- before anything is written. Each count hash expires (relative to the caller's clock) when its newest
-- slice leaves its retention, so a counter that stops receiving data goes away without the cleaner.
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
-- ARGV[11+i]     precision i, seconds
-- Reply: { outcome, context, [new counters created: applied only], prec, ... } the precisions
--        (seconds) the count landed in (outcome, context and the count: see idem_lib);
--        { 0, context, 0 } and nothing stored when every retention is past `at` (a refusal: a retry
--        with the key is judged again)
-- Errors: TB_QUOTA counters 1, TB_CAPACITY <live> <cap> 1 (nothing applied)
local now_ms = tonumber(ARGV[1])
local now_sec = math.floor(now_ms / 1000)
local samples = tonumber(ARGV[2])
local at = tonumber(ARGV[3])
local count = tonumber(ARGV[4])
local name = ARGV[5]
local idem = idem_args(6, name .. '\31')
local replay = idem_begin(KEYS[1], 'known', idem, now_ms)
if replay then return replay end
local allowance = tonumber(ARGV[10])
local cap = tonumber(ARGV[11])
local names_key = sibling_key(KEYS[1], 'known', 'names')

local landed, starts, live_until_ms = {}, {}, 0
for i = 1, #KEYS - 1 do
  local prec = tonumber(ARGV[11 + i])
  local start = at - (at % prec)
  if start > now_sec - samples * prec then
    landed[#landed + 1] = prec
    starts[i] = start
    live_until_ms = math.max(live_until_ms, (start + samples * prec) * 1000)
  end
end
if #landed == 0 then return { 0, idem.context, 0 } end

-- A counter listed in no names entry may predate them: its index entries say whether it exists.
local function known_before()
  for i = 1, #KEYS - 1 do
    if redis.call('ZSCORE', KEYS[1], ARGV[11 + i] .. ':' .. name) then return true end
  end
  return false
end

local created = 0
if #landed > 0 then
  local live = redis.call('ZSCORE', names_key, name)
  local is_new
  if live then is_new = tonumber(live) <= now_ms else is_new = not known_before() end
  if is_new then
    if cap > 0 then
      local held = redis.call('ZCOUNT', names_key, '(' .. now_ms, '+inf')
      if held >= cap then return redis.error_reply('TB_CAPACITY ' .. held .. ' ' .. cap .. ' 1') end
    end
    if allowance == 0 then return redis.error_reply('TB_QUOTA counters 1') end
    created = 1
  end
end

for i = 1, #KEYS - 1 do
  local start = starts[i]
  if start then
    local prec = tonumber(ARGV[11 + i])
    redis.call('HINCRBY', KEYS[1 + i], string.format('%d', start), count)
    redis.call('ZADD', KEYS[1], 0, string.format('%d', prec) .. ':' .. name)
    -- Only ever later: a late sample must not shorten the life of newer slices.
    local ttl_ms = (start + samples * prec) * 1000 - now_ms
    local current_ms = redis.call('PTTL', KEYS[1 + i])
    if current_ms < 0 or current_ms < ttl_ms then redis.call('PEXPIRE', KEYS[1 + i], ttl_ms) end
  end
end
if #landed > 0 then redis.call('ZADD', names_key, 'GT', live_until_ms, name) end
return idem_finish(KEYS[1], 'known', idem, now_ms, landed, { created })
