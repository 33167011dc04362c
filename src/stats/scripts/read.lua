-- requires: reader
-- read: both hour hashes of a stats context/type in one atomic step (a rollover never falls between).
-- Keys: current (the current hour's hash), previous (the previous hour's hash)
-- Args (reader.read_call, CALLS.read): the header (no version, time 0: it reads none, no windows), and
--   no arguments of its own
-- Reply (reader.answer, CALLS.read): current, previous (each HGETALL's flat field/value list; the app
--   picks the hour by its clock)
local function read(keys, args)
  local current_key, previous_key = keys[1], keys[2]
  reader.read_call(args, CALLS.read)
  return reader.answer(CALLS.read, {
    current = redis.call('HGETALL', current_key),
    previous = redis.call('HGETALL', previous_key),
  })
end
