/// The map's look, in one stylesheet inside the SVG (so the file stands alone, and a page can
/// restyle it).
enum MapStyle {
    static let css = """
        text{font-family:"DejaVu Sans",Verdana,Arial,sans-serif}\
        .background{fill:#f3f1ec}\
        .region,.track,.open-visit,.refused-shape,.swatch-refused{vector-effect:non-scaling-stroke}\
        .frame{fill:none;stroke:#a8a29e}\
        .region,.swatch-region{fill:#2563eb;fill-opacity:.16;stroke:#1d4ed8;stroke-width:1.2}\
        .region.region-dot{fill-opacity:.75;stroke-width:.8}\
        .crowded .region{fill-opacity:.05;stroke-width:.6}.crowded .region.region-dot{fill-opacity:.6}\
        .region.disabled{fill:#9ca3af;stroke:#6b7280;stroke-dasharray:4 3}\
        .region.has-open-visit,.swatch-open-visit{fill:#f59e0b;fill-opacity:.32;stroke:#b45309}\
        .region-cluster circle,.swatch-cluster{fill:#1d4ed8;fill-opacity:.78;stroke:#fff;stroke-width:1.5}\
        .region-cluster text{fill:#fff;font-size:10px;font-weight:bold;text-anchor:middle}\
        .open-visit{fill:none;stroke:#d97706;stroke-width:3.5;stroke-opacity:.9}\
        .refused-shape,.swatch-refused{fill:#dc2626;fill-opacity:.12;stroke:#dc2626;stroke-width:1.6;stroke-dasharray:5 3}\
        .problem-mark path{stroke:#b91c1c;stroke-width:2.5;fill:none}\
        .problem-mark text{fill:#b91c1c;font-size:12px;font-weight:bold;paint-order:stroke;stroke:#fff;stroke-width:3px}\
        .track,.swatch-track,.swatch-crossings{fill:none;stroke-width:2.4;stroke-linejoin:round;stroke-linecap:round;stroke-opacity:.85}\
        .track.crossings,.swatch-crossings{stroke-dasharray:6 4;stroke-width:1.8}\
        .dropped-fix,.swatch-dropped{fill:#57534e;fill-opacity:.35}\
        .device-position{stroke:#fff;stroke-width:2}\
        .event,.swatch-enter,.swatch-exit,.swatch-dwell,.swatch-overstay,.swatch-absent,.swatch-overspeed{stroke:#fff;stroke-width:1.2}\
        .swatch-cluster-count{fill:#fff;font-size:9px;font-weight:bold;text-anchor:middle}\
        .event.enter,.swatch-enter{fill:#16a34a}.event.exit,.swatch-exit{fill:#dc2626}.event.dwell,.swatch-dwell{fill:#7c3aed}.event.overstay,.swatch-overstay{fill:#ea580c}.event.absent,.swatch-absent{fill:#be123c}.event.overspeed,.swatch-overspeed{fill:#0891b2}\
        .event.gap{stroke:#111827;stroke-dasharray:2 1.5}\
        .event.pass{fill-opacity:.55}\
        .label{font-size:11px;fill:#1f2937;paint-order:stroke;stroke:#fff;stroke-width:3px;stroke-linejoin:round}\
        .label.device-label{font-weight:bold;fill:#111827}\
        .label.refused-label{fill:#991b1b;font-weight:bold}\
        .north-arrow path{fill:#374151}.north-arrow text{font-size:12px;font-weight:bold;fill:#374151}\
        .scale-back,.legend-back{fill:#fff;fill-opacity:.85;stroke:#d6d3d1}\
        .scale-dark{fill:#374151}.scale-light{fill:#fff;stroke:#374151;stroke-width:.8}\
        .scale-bar text{font-size:11px;fill:#374151}\
        .legend text{font-size:11px;fill:#374151}\
        .footer-back{fill:#fff}\
        .footer text{font-size:12px;fill:#44403c}\
        .footer .problem-head{font-weight:bold;fill:#991b1b}.footer .problem{fill:#991b1b}\
        .footer .note{fill:#78716c}
        """
}
