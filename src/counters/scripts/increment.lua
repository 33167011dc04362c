-- counter_increment: adds a count to the slice of `at` at every precision whose retention still
-- covers it, and lists "<prec>:<name>" in the bucket's known index for each of those precisions, in
-- one atomic step (so the cleaner never sees data outside the index).
-- A slice start s is live when s > now - samples * prec (the N newest slices, the current one included).
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
-- ARGV[9+i]      precision i, seconds
-- Reply: { outcome, context, prec, ... } the precisions (seconds) the count landed in; none when every
--        retention is past `at` (outcome and context: see idem_lib)
local now_ms = tonumber(ARGV[1])
local now_sec = math.floor(now_ms / 1000)
local samples = tonumber(ARGV[2])
local at = tonumber(ARGV[3])
local count = tonumber(ARGV[4])
local name = ARGV[5]
local idem = idem_args(6, name .. '\31')
local replay = idem_begin(KEYS[1], 'known', idem, now_ms)
if replay then return replay end
local landed = {}
for i = 1, #KEYS - 1 do
  local prec = tonumber(ARGV[9 + i])
  local start = at - (at % prec)
  if start > now_sec - samples * prec then
    redis.call('HINCRBY', KEYS[1 + i], string.format('%d', start), count)
    redis.call('ZADD', KEYS[1], 0, string.format('%d', prec) .. ':' .. name)
    landed[#landed + 1] = prec
  end
end
return idem_finish(KEYS[1], 'known', idem, now_ms, landed)
