// Reads a trace CSV (time,lat,lon,accuracy,…) with CSV.swift: every row's fields, the three
// numbers parsed; the time is left as text (our reader also parses it, so this is the
// peer's lower bound).
import CSV
import Foundation

guard CommandLine.arguments.count == 2, let stream = InputStream(fileAtPath: CommandLine.arguments[1]) else {
    FileHandle.standardError.write(Data("usage: csv-peer TRACE.csv\n".utf8))
    exit(64)
}
let start = DispatchTime.now().uptimeNanoseconds
let reader = try CSVReader(stream: stream, hasHeaderRow: true)
var rows = 0
var sum = 0.0
while let row = reader.next() {
    guard row.count >= 4, let lat = Double(row[1]), let lon = Double(row[2]) else { continue }
    sum += lat + lon + (Double(row[3]) ?? 0)
    rows += 1
}
let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
print(
    "CSV.swift: \(rows) rows in \(String(format: "%.3f", seconds)) s = \(String(format: "%.2f", Double(rows) / seconds / 1e6)) M rows/s (checksum \(Int(sum)))"
)
