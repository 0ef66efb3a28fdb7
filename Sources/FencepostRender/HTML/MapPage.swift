import FencepostCore
import Foundation

/// `render map -o FILE.html`: the SVG in a page of its own, with hover details (an event's
/// time, kind and visit; a region's properties) and pan and zoom, all embedded: the file
/// opens offline, from anywhere.
package enum MapPage {
    package static func html(_ scene: MapScene, drawing: MapRenderer.Drawing, title: String) -> String {
        let svg = drawing.svg.replacingOccurrences(of: #"<?xml version="1.0" encoding="UTF-8"?>"#, with: "")
        return """
            <!DOCTYPE html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <meta name="generator" content="fencepost render map">
            <title>\(SVGDocument.escape(title))</title>
            <style>\(pageStyle)</style>
            </head>
            <body>
            <header><h1>\(SVGDocument.escape(title))</h1>
            <div class="controls"><button id="zoom-in" title="Zoom in (+)">+</button><button id="zoom-out" title="Zoom out (-)">−</button><button id="zoom-reset" title="Whole map (0)">Fit</button>
            <span class="hint">Drag to pan, wheel to zoom; point at anything for its details.</span></div></header>
            <main><div id="map">\(svg)</div><aside id="details" hidden></aside></main>
            <script type="application/json" id="fencepost-details">\(scriptSafe(details(scene).canonicalText()))</script>
            <script>\(MapScript.panZoom)</script>
            <script>\(MapScript.details)</script>
            </body>
            </html>

            """
    }

    package static let pageStyle = """
        body{margin:0;font:14px "DejaVu Sans",Verdana,Arial,sans-serif;color:#1c1917;background:#fafaf9}\
        header{display:flex;flex-wrap:wrap;align-items:center;gap:12px;padding:8px 14px;border-bottom:1px solid #e7e5e4;background:#fff}\
        h1{font-size:16px;margin:0}\
        .controls button{font-size:15px;min-width:34px;margin-right:4px;padding:3px 8px;border:1px solid #a8a29e;border-radius:4px;background:#fff;cursor:pointer}\
        .hint{color:#78716c;font-size:12px;margin-left:8px}\
        main{display:flex;gap:12px;padding:12px;align-items:flex-start}\
        #map{flex:1 1 auto;min-width:0}\
        #map svg{display:block;width:100%;height:calc(100vh - 110px);min-height:360px;border:1px solid #d6d3d1;background:#f3f1ec;cursor:grab;touch-action:none}\
        #details{flex:0 0 300px;background:#fff;border:1px solid #d6d3d1;border-radius:4px;padding:10px;font-size:12px;overflow-wrap:anywhere}\
        #details h2{font-size:14px;margin:0 0 6px}\
        #details th{text-align:left;vertical-align:top;padding:2px 8px 2px 0;color:#57534e;font-weight:normal}\
        @media (max-width:900px){main{flex-direction:column}#details{flex-basis:auto;width:100%}}
        """

    /// JSON inside `<script>`: `</` would end the element early.
    static func scriptSafe(_ json: String) -> String {
        json.replacingOccurrences(of: "</", with: "<\\/")
    }

    /// What hovering shows, by id: regions with every property of their feature, events,
    /// open visits, devices and the refused config's problems.
    static func details(_ scene: MapScene) -> JSONValue {
        var regions: [String: JSONValue] = [:]
        for region in scene.regions {
            var properties = region.feature["properties"]?.objectValue ?? [:]
            properties["kind"] = .string(region.shape.kind)
            regions[region.id] = .object(properties)
        }
        var events: [String: JSONValue] = [:]
        for event in scene.events {
            events[event.id] = .object([
                "id": .string(event.id), "kind": .string(event.kind),
                "time": .string(Timestamp.format(seconds: event.time)),
                "device": .string(event.device), "region": .string(event.regionID),
                "visit_id": event.visitID.map(JSONValue.string) ?? .null,
                "flags": .array(event.flags.map(JSONValue.string)),
            ])
        }
        var visits: [String: JSONValue] = [:]
        for visit in scene.openVisits {
            visits[visit.id] = .object([
                "visit_id": .string(visit.id), "device": .string(visit.device), "region": .string(visit.regionID),
                "entered_at": .string(Timestamp.format(seconds: visit.enteredAt)),
            ])
        }
        var devices: [String: JSONValue] = [:]
        for track in scene.tracks {
            var fields: [String: JSONValue] = [
                "points drawn": .number(Double(track.points.count)), "source": .string(track.source.rawValue),
            ]
            if let last = track.last {
                fields["last seen"] = .string(Timestamp.format(seconds: last.time))
                fields["last position"] = .string("\(last.lat), \(last.lon)")
            }
            if !track.dropped.isEmpty {
                var reasons: [String: Int] = [:]
                for fix in track.dropped { reasons[fix.reason.rawValue, default: 0] += 1 }
                fields["dropped (drawn)"] = .object(reasons.mapValues { .number(Double($0)) })
            }
            devices[track.device] = .object(fields)
        }
        return .object([
            "regions": .object(regions), "events": .object(events), "visits": .object(visits),
            "devices": .object(devices),
            "problems": .array((scene.refused?.problems ?? []).map(JSONValue.string)),
        ])
    }
}
