-- wrk script for the thumbnails' benchmark (scripts/bench/steps/map.sh, issue 55): every request
-- is GET of a path drawn at random from the file named by the environment's THUMB_PATHS (one a
-- line), by a generator seeded with THUMB_SEED (the same draws for every server); at the end one
-- line of key=value pairs on stdout, as scripts/bench/loadgen.c prints: requests, rps, latency
-- percentiles in µs, errors (socket errors, non-2xx replies and timeouts), bytes per request.
local paths = {}

function init(args)
    local file = assert(io.open(os.getenv("THUMB_PATHS"), "r"))
    for line in file:lines() do
        if #line > 0 then paths[#paths + 1] = line end
    end
    file:close()
    math.randomseed(tonumber(os.getenv("THUMB_SEED") or "42"))
end

function request()
    return wrk.format("GET", paths[math.random(#paths)])
end

function done(summary, latency, requests)
    local e = summary.errors
    local seconds = summary.duration / 1e6
    io.write(string.format(
        "requests=%d seconds=%.2f rps=%.1f p50_us=%.1f p90_us=%.1f p99_us=%.1f p999_us=%.1f max_us=%.1f " ..
        "errors=%d non2xx=%d bytes_per_request=%.0f\n",
        summary.requests, seconds, summary.requests / seconds, latency:percentile(50), latency:percentile(90),
        latency:percentile(99), latency:percentile(99.9), latency.max,
        e.connect + e.read + e.write + e.status + e.timeout, e.status,
        summary.requests > 0 and summary.bytes / summary.requests or 0))
end
