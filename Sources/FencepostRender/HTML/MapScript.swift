/// The plain JavaScript that makes a rendered map interactive, shared by `render map -o
/// FILE.html` (embedded in the file) and the live page of `serve` (served from the binary).
/// No library, no network.
package enum MapScript {
    /// `FencepostMap.attach(svg)`: pan (drag), zoom (wheel, buttons, keys) on the map's
    /// `.viewport`; labels keep their size on screen and appear from their `data-min-zoom`;
    /// markers (`.fixed-size`) keep theirs; the scale bar follows the zoom. `project(lon, lat)`
    /// gives the map's pixel for a position (the root's `data-scale` and `data-origin-*`), and
    /// `onChange` tells a page (tiles, live points) when the view moved.
    package static let panZoom = String(decoding: PackageResources.map_pan_zoom_js, as: UTF8.self)

    /// Hover details for the HTML form: what the element under the pointer is (a region's
    /// properties, an event's time, kind and visit), from the page's `#fencepost-details`
    /// JSON, in the `#details` panel.
    package static let details = String(decoding: PackageResources.map_details_js, as: UTF8.self)
}
