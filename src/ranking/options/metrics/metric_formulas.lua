-- module: metric_formulas
-- metric_formulas: the formulas of the metrics option's views (src/ranking/options/metrics/), the same
-- maths as metric-formulas.ts, operation for operation (a test holds both equal). Counts below 0 count
-- as 0.
-- KEYS: 0

local WILSON_Z = 1.96

-- The lower bound of the Wilson score interval at 95 % of positive / (positive + negative); 0 without
-- positives (exactly: the interval's maths would leave a rounding remainder).
local function wilson(positive, negative)
  local p = math.max(0, positive)
  if p == 0 then return 0 end
  local total = p + math.max(0, negative)
  local share = p / total
  local z2 = WILSON_Z * WILSON_Z
  local centre = share + z2 / (2 * total)
  local spread = WILSON_Z * math.sqrt((share * (1 - share) + z2 / (4 * total)) / total)
  return (centre - spread) / (1 + z2 / total)
end

-- (p + n)^(min(p, n) / max(p, n)), 0 when either is 0.
local function controversy(positive, negative)
  local p, n = math.max(0, positive), math.max(0, negative)
  if p == 0 or n == 0 then return 0 end
  return (p + n) ^ (math.min(p, n) / math.max(p, n))
end

metric_formulas.wilson = wilson
metric_formulas.controversy = controversy
