-- module: chunks
-- chunks_lib: one command over many arguments, sent as commands of at most CHUNK arguments (what
-- unpack takes on Lua's C stack), so a batch of thousands of items is a few commands, not one an item.
-- KEYS: 0

-- Arguments one command takes; even, so field/value and score/member pairs stay whole.
local CHUNK = 1000

-- `command` on `key` with `args`, CHUNK of them a command: the replies as one list in the order of
-- `args` (an HMGET's, a ZMSCORE's: false where none; empty for writes).
local function per_chunk(command, key, args)
  local values = {}
  for from = 1, #args, CHUNK do
    local chunk = redis.call(command, key, unpack(args, from, math.min(from + CHUNK - 1, #args)))
    if type(chunk) == 'table' then
      for i = 1, #chunk do values[from + i - 1] = chunk[i] end
    end
  end
  return values
end

chunks.CHUNK = CHUNK
chunks.per_chunk = per_chunk
