-- module: counters
-- counters_lib: what the counters' functions share (a module of tb_counters): the precisions a call
-- names, read from its one `precisions` argument.

-- Parsed precision lists by their argument: every call of an instance sends the same configured list,
-- and a library's top-level locals live from call to call (until the next load on that node), so the
-- list is parsed once and later calls allocate nothing for it (what they allocate, Lua's collector
-- pays for in steps over the whole library). Bounded: emptied when it holds PRECISIONS_CACHE_MAX
-- lists (instances configured alike send one). The lists are shared by every call: read-only.
local PRECISIONS_CACHE_MAX = 16
local precisions_cache = {}
local precisions_cache_size = 0

-- The precisions of `raw`, the configured ones (s) joined by commas ("60,3600"), in the order the
-- call's count hashes follow them: as numbers, and as their texts (an index member's "<prec>:" part,
-- made without formatting a number). A precision that is no integer is a caller bug.
local function precisions_of(raw)
  local cached = precisions_cache[raw]
  if cached then return cached.numbers, cached.texts end
  local numbers, texts = {}, {}
  for text in string.gmatch(raw, '[^,]+') do
    if not string.match(text, '^%d+$') then return error({ err = 'TB_BAD_ARGS precision is no integer: ' .. text }) end
    numbers[#numbers + 1] = tonumber(text)
    texts[#texts + 1] = text
  end
  if precisions_cache_size >= PRECISIONS_CACHE_MAX then precisions_cache, precisions_cache_size = {}, 0 end
  precisions_cache_size = precisions_cache_size + 1
  precisions_cache[raw] = { numbers = numbers, texts = texts }
  return numbers, texts
end

counters.precisions_of = precisions_of
