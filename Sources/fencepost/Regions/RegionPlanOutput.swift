import ArgumentParser
import FencepostCore
import FencepostGeometry

enum PlanFormat: String, ExpressibleByArgument, CaseIterable {
    case text, json
}

/// How plans and config problems are written for people and for scripts.
enum RegionPlanOutput {
    /// More problems than this are summarised, so a wholly wrong file stays readable.
    static let maximumIssueLines = 100

    static func render(_ plan: RegionPlan, format: PlanFormat) -> String {
        switch format {
        case .text:
            return (plan.lines + [plan.summary]).joined(separator: "\n")
        case .json:
            return plan.json.canonicalText()
        }
    }

    static func issueLines(_ error: RegionConfigError) -> [String] {
        var lines = error.issues.prefix(maximumIssueLines).map { "error: \($0)" }
        if error.issues.count > maximumIssueLines {
            lines.append("error: ... and \(error.issues.count - maximumIssueLines) more problems")
        }
        lines.append(
            "refused: \(error.issues.count) problem\(error.issues.count == 1 ? "" : "s") in the region config; nothing was applied"
        )
        return lines
    }

    /// A warning per region far from all the others (on stderr: the plan itself is unchanged).
    static func outlierWarnings(_ regions: [Region]) -> [String] {
        outlierWarnings(regions.map { ($0.id, $0.shape.bounds) })
    }

    /// The same from each region's id and lon/lat box, in id order.
    static func outlierWarnings(_ boxes: [(id: String, bounds: Envelope)]) -> [String] {
        RegionOutliers.find(boxes: boxes).map { outlier in
            var line =
                "warning: region \(outlier.id) lies \(Int(outlier.kilometres.rounded())) km from all the others"
            line +=
                outlier.swapLooksRight
                ? "; its coordinates look like [lat, lon] swapped (GeoJSON wants [lon, lat])"
                : "; is it where you meant?"
            return line
        }
    }
}
