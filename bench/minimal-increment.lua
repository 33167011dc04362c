-- minimal_increment: the floor of the coalescing benchmark, what a team writes instead of using
-- trendboard: one window, one hash per slot and one results zset, no expiry, no checks.
-- KEYS[1]  the current slot's hash
-- KEYS[2]  the results zset
-- ARGV[1]  item id
-- ARGV[2]  amount
-- Reply: { score (string), rank }
redis.call('HINCRBY', KEYS[1], ARGV[1], ARGV[2])
local score = redis.call('ZINCRBY', KEYS[2], ARGV[2], ARGV[1])
return { score, redis.call('ZCOUNT', KEYS[2], '(' .. score, '+inf') + 1 }
