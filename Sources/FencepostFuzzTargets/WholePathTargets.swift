/// Targets that follow what a parser accepts all the way down, where a value a parser lets
/// through can still trap: a trace file through the filter, the monitor, the visit tracker and
/// a store, and HTTP requests through the service's router. (A `time` of 1e18 passed every
/// parser target and killed `serve` in the store.)
enum WholePathTargets {
    static let all: [FuzzTarget] = [
        FuzzTarget(
            async: "ingest",
            "a trace file (first byte: its format, or detected) through filter, monitor, tracker and a store in memory; twice: the second adds nothing",
            IngestTarget.run),
        FuzzTarget(
            async: "router",
            "an HTTP request (first byte: the route) to the service's router in process, on a store in memory; never a 5xx",
            RouterTarget.run),
    ]
}
