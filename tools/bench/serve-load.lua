-- wrk script for tools/bench/serve: each wrk thread is one device (run wrk with as many
-- connections as threads), posting the generated trace's positions in time order, one second
-- apart, so every fix is new and in order and the service processes (not drops) all of them.
--   mode=batch : POST /v1/devices/{device}/locations with BATCH fixes per request
--   mode=osmand: GET /osmand?id=…&lat=…&lon=…&timestamp=… (one fix per request)
local threads = {}
local counter = 0

function setup(thread)
  counter = counter + 1
  thread:set("id", counter)
  table.insert(threads, thread)
end

function init(args)
  mode = os.getenv("MODE") or "batch"
  batch = tonumber(os.getenv("BATCH") or "100")
  token = os.getenv("TOKEN")
  device = "load-" .. mode .. "-" .. id
  points = {}
  local file = assert(io.open(os.getenv("TRACE"), "r"))
  file:read("*l")  -- header
  for line in file:lines() do
    local _, lat, lon = line:match("([^,]+),([^,]+),([^,]+)")
    points[#points + 1] = { lat, lon }
    if #points >= 200000 then break end
  end
  file:close()
  next_point = 1 + (id * 7919) % #points
  clock = tonumber(os.getenv("START") or "1750000000")
  sent = 0
end

local function fix()
  local point = points[next_point]
  next_point = next_point % #points + 1
  clock = clock + 1
  sent = sent + 1
  return point, clock
end

function request()
  if mode == "osmand" then
    local point, time = fix()
    return wrk.format("GET", string.format("/osmand?id=%s&lat=%s&lon=%s&timestamp=%d&accuracy=8&token=%s",
      device, point[1], point[2], time, token))
  end
  local items = {}
  for i = 1, batch do
    local point, time = fix()
    items[i] = string.format('{"time":%d,"lat":%s,"lon":%s,"accuracy":8}', time, point[1], point[2])
  end
  local body = '{"fixes":[' .. table.concat(items, ",") .. ']}'
  return wrk.format("POST", "/v1/devices/" .. device .. "/locations",
    { ["Authorization"] = "Bearer " .. token, ["Content-Type"] = "application/json" }, body)
end

function done(summary, latency, requests)
  io.write(string.format("non-200 responses: %d\n", summary.errors.status))
end
