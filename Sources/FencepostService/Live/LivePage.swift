import FencepostRender

/// The live page's files, compiled into the binary from `Live/Assets/` (no CDN, nothing to
/// install beside the binary): the HTML; the stylesheet; and the behaviour, in plain
/// JavaScript: it asks for a token once (kept in the tab's session storage, sent only in
/// `Authorization` headers), draws the service's map of the regions, follows the event stream
/// with `fetch` (so the token stays out of the URL), polls the devices' recent tracks about
/// once a second, and lists open visits.
enum LivePage {
    static let html = String(decoding: PackageResources.live_html, as: UTF8.self)
    static let style = String(decoding: PackageResources.live_css, as: UTF8.self)
    static let script = String(decoding: PackageResources.live_js, as: UTF8.self)
}
