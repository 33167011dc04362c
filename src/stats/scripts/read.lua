-- read: both hour hashes of a stats context/type in one atomic step (a rollover never falls between).
-- KEYS: 2
-- KEYS[1]        the current hour's hash
-- KEYS[2]        the previous hour's hash
-- (no ARGV)
-- Reply: { HGETALL current, HGETALL previous } (flat field/value lists; the app picks the hour by its clock)
local function read(keys, args)
  return { redis.call('HGETALL', keys[1]), redis.call('HGETALL', keys[2]) }
end
