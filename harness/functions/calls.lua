-- requires: reader, shared
-- calls: the registered functions of the test library (one `local function` per handler).

-- Answers 0 and reads nothing: the floor of a call (bench/functions.ts).
local function nothing(keys, args)
  return 0
end

-- Parses the header and answers nothing: the fixed cost of a call (bench/functions.ts).
local function header_only(keys, args)
  reader.read_header(args)
  return 0
end

-- Parses the header args[1] times over (after the count): the cost of read_header alone, without a
-- call's own cost (bench/functions.ts divides by the count).
local function header_loop(keys, args)
  local count = tonumber(args[1])
  local header_args = { unpack(args, 2) }
  for _ = 1, count do reader.read_header(header_args) end
  return count
end

-- The header as read_header named it, flattened.
local function header_echo(keys, args)
  return shared.header_reply((reader.read_header(args)))
end

-- The header, then `request` records: answers { record count, then item, amount, key of each }.
local function records_echo(keys, args)
  local _, next_arg = reader.read_header(args)
  local rows = reader.read_records(args, next_arg, RECORD_FIELDS.request)
  local reply = { #rows }
  for _, row in ipairs(rows) do
    reply[#reply + 1] = row.item
    reply[#reply + 1] = row.amount
    reply[#reply + 1] = row.key
  end
  return reply
end

-- A named call (CALLS.named_echo): answers the item, twice the amount and the header's window count by
-- name, leaving out the field named `leave_out` ("": none).
local function named_echo(keys, args)
  local header, arg = reader.read_call(args, CALLS.named_echo)
  local reply = { item = arg.item, doubled = 2 * tonumber(arg.amount), windows = #header.windows }
  if arg.leave_out ~= '' then reply[arg.leave_out] = nil end
  return reader.answer(CALLS.named_echo, reply)
end

-- Adds args after the header to KEYS[1]; answers the new value.
local function add(keys, args)
  local _, next_arg = reader.read_header(args)
  return shared.add_to(keys[1], tonumber(args[next_arg]))
end

-- A read: KEYS[1]'s value (0 when absent).
local function get(keys, args)
  return tonumber(redis.call('GET', keys[1]) or '0')
end

-- A read-only function that tries to write: Redis refuses the write.
local function sneaky_write(keys, args)
  return redis.call('SET', keys[1], 'x')
end

-- Fails on this line, so the test sees Redis' line mapped back to this module.
local function fail(keys, args)
  local nothing = nil
  return nothing.field
end

-- Counts its own calls since the library's last load on this node.
local function count_calls(keys, args)
  shared.calls = shared.calls + 1
  return shared.calls
end
