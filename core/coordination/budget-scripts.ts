/**
 * The Lua scripts of the shared budgets (`redis-budget-counters.ts`). Each runs atomically inside
 * Redis, so a reservation's check and take cannot interleave with another replica's.
 *
 * State per user and period: the spend, a string holding integer nano-USD (`INCRBY`), at
 * `KEYS[1]`; the live reservations, a sorted set at `KEYS[2]`, member `<reservation id>:<amount
 * nanos>`, score the reservation's expiry in Redis server ms (`TIME`, not a replica's clock). Expired
 * members (a replica that died mid-request) are dropped before every sum, so they hold nothing beyond
 * their TTL.
 *
 * Seeding: the spend of record is in the database. A script that finds no spend key uses `ARGV[1]`
 * (the stored spend, as the replica read it) when it is ≥ 0, setting it only because the key is
 * missing (SET NX semantics, atomic within the script); when it is -1 (not read yet: the replica
 * reads the database only when needed) the script changes nothing and answers -1 as its first value,
 * and the replica runs it again with the stored spend. `ARGV[2]`: how long the spend key lives, ms
 * (0 = forever).
 *
 * Numbers: Lua numbers are doubles, exact for integers below 2^53 nano-USD (9 million USD).
 */

const COMMON = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local function spent_of(spend_key, seed, keep)
  local v = redis.call('GET', spend_key)
  if v then return tonumber(v) end
  if tonumber(seed) < 0 then return nil end
  if tonumber(keep) > 0 then redis.call('SET', spend_key, seed, 'PX', keep) else redis.call('SET', spend_key, seed) end
  return tonumber(seed)
end
local function held_of(held_key)
  redis.call('ZREMRANGEBYSCORE', held_key, '-inf', string.format('%.0f', now))
  local total = 0
  for _, member in ipairs(redis.call('ZRANGE', held_key, 0, -1)) do
    total = total + tonumber(string.match(member, ':(%d+)$'))
  end
  return total
end
`;

/** KEYS: spend, reservations. ARGV: seed, keepMs. Returns `{1, spent, reserved}`, or `{-1, 0, 0}` (seed needed). */
export const BUDGET_READ = `${COMMON}
local spent = spent_of(KEYS[1], ARGV[1], ARGV[2])
if not spent then return { -1, 0, 0 } end
return { 1, spent, held_of(KEYS[2]) }
`;

/**
 * KEYS: spend, reservations. ARGV: seed, keepMs, member (`<id>:<amount>`), amount, limit, TTL ms.
 * Returns `{1, spent, reserved after}` when reserved, `{0, spent, reserved}` when it does not fit,
 * `{-1, 0, 0}` when a seed is needed. A zero amount is allowed and holds nothing.
 */
export const BUDGET_RESERVE = `${COMMON}
local spent = spent_of(KEYS[1], ARGV[1], ARGV[2])
if not spent then return { -1, 0, 0 } end
local reserved = held_of(KEYS[2])
local amount, limit, ttl = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
if spent + reserved + amount > limit then return { 0, spent, reserved } end
if amount > 0 then
  redis.call('ZADD', KEYS[2], string.format('%.0f', now + ttl), ARGV[3])
  -- Every member expires within TTL of the latest add: the set outlives them all, then goes.
  redis.call('PEXPIRE', KEYS[2], ttl)
end
return { 1, spent, reserved + amount }
`;

/**
 * KEYS: spend (of the period now), reservations (of the reservation's period). ARGV: seed, keepMs,
 * member, actual. Drops the reservation and adds `actual` to the spend. Returns `{1, spent after}`
 * or `{-1, 0}` when a seed is needed (nothing changed).
 */
export const BUDGET_SETTLE = `${COMMON}
local actual = tonumber(ARGV[4])
local spent = spent_of(KEYS[1], ARGV[1], ARGV[2])
if not spent then
  if actual > 0 then return { -1, 0 } end
  spent = 0
end
redis.call('ZREM', KEYS[2], ARGV[3])
if actual > 0 then spent = redis.call('INCRBY', KEYS[1], ARGV[4]) end
return { 1, spent }
`;

/**
 * Several budgets at once (a user's and their team's), all or nothing. KEYS: spend and reservations
 * of each budget, in pairs. ARGV: member, amount, TTL ms, then per budget: seed, keepMs, limit.
 * Returns `{1, 0, spent1, reserved1 after, spent2, …}` when reserved in every budget,
 * `{0, i, spent1, reserved1, …}` when it does not fit budget i (1-based; nothing taken), `{-1, i}`
 * when budget i needs its seed (nothing taken; the budgets before it may have been seeded).
 */
export const BUDGET_RESERVE_ALL = `${COMMON}
local n = #KEYS / 2
local member, amount, ttl = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local spent, reserved = {}, {}
for i = 1, n do
  local s = spent_of(KEYS[2 * i - 1], ARGV[3 * i + 1], ARGV[3 * i + 2])
  if not s then return { -1, i } end
  spent[i] = s
  reserved[i] = held_of(KEYS[2 * i])
end
local refused = 0
for i = n, 1, -1 do
  if spent[i] + reserved[i] + amount > tonumber(ARGV[3 * i + 3]) then refused = i end
end
local taken = 0
if refused == 0 then
  taken = amount
  if amount > 0 then
    for i = 1, n do
      redis.call('ZADD', KEYS[2 * i], string.format('%.0f', now + ttl), member)
      redis.call('PEXPIRE', KEYS[2 * i], ttl)
    end
  end
end
local out = { refused == 0 and 1 or 0, refused }
for i = 1, n do
  out[#out + 1] = spent[i]
  out[#out + 1] = reserved[i] + taken
end
return out
`;
