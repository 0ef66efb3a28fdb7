-- wrk script for tools/bench/serve: each wrk thread posts for DEVICES devices in turn (as many
-- as it has connections), each device the generated trace's positions in time order, one
-- second apart, so fixes are new and in order and the service processes (not drops) them.
--   mode=batch : POST /v1/devices/{device}/locations with BATCH fixes per request
--   mode=osmand: GET /osmand?id=…&lat=…&lon=…&timestamp=… (one fix per request)
--   mode=owntracks: POST /owntracks, one OwnTracks location per request, as the app in HTTP
--                   mode sends it (X-Limit-U/X-Limit-D name the device, basic auth the token)
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
  devices = {}
  for k = 1, tonumber(os.getenv("DEVICES") or "1") do
    devices[k] = { name = "load-" .. mode .. "-" .. id .. "-" .. k, clock = tonumber(os.getenv("START") or "1750000000"),
                   start = (id * 7919 + k * 104729) }
  end
  turn = 0
  basic = "Basic " .. (os.getenv("BASIC") or "")
  points = {}
  local file = assert(io.open(os.getenv("TRACE"), "r"))
  file:read("*l")  -- header
  for line in file:lines() do
    local _, lat, lon = line:match("([^,]+),([^,]+),([^,]+)")
    -- The rest of a fix's JSON after its time, made once: the load generator shares the
    -- machine's two cores with the service, so it should spend as little as it can per request.
    points[#points + 1] = { lat, lon, ',"lat":' .. lat .. ',"lon":' .. lon .. ',"accuracy":8}' }
    if #points >= 200000 then break end
  end
  file:close()
  for _, device in ipairs(devices) do device.next_point = 1 + device.start % #points end
end

local function fix(device)
  local point = points[device.next_point]
  device.next_point = device.next_point % #points + 1
  device.clock = device.clock + 1
  return point, device.clock
end

function request()
  turn = turn % #devices + 1
  local device = devices[turn]
  if mode == "osmand" then
    local point, time = fix(device)
    return wrk.format("GET", string.format("/osmand?id=%s&lat=%s&lon=%s&timestamp=%d&accuracy=8&token=%s",
      device.name, point[1], point[2], time, token))
  end
  if mode == "owntracks" then
    local point, time = fix(device)
    local body = string.format('{"_type":"location","lat":%s,"lon":%s,"tst":%d,"acc":8,"tid":"lt"}',
      point[1], point[2], time)
    return wrk.format("POST", "/owntracks",
      { ["Authorization"] = basic, ["Content-Type"] = "application/json", ["X-Limit-U"] = "load",
        ["X-Limit-D"] = device.name }, body)
  end
  local items = {}
  for i = 1, batch do
    local point, time = fix(device)
    items[i] = '{"time":' .. time .. point[3]
  end
  local body = '{"fixes":[' .. table.concat(items, ",") .. ']}'
  return wrk.format("POST", "/v1/devices/" .. device.name .. "/locations",
    { ["Authorization"] = "Bearer " .. token, ["Content-Type"] = "application/json" }, body)
end

function done(summary, latency, requests)
  io.write(string.format("non-200 responses: %d\n", summary.errors.status))
  io.write(string.format("latency percentiles (ms): p50 %.2f, p90 %.2f, p99 %.2f, p99.9 %.2f, max %.2f\n",
    latency:percentile(50) / 1000, latency:percentile(90) / 1000, latency:percentile(99) / 1000,
    latency:percentile(99.9) / 1000, latency.max / 1000))
end
