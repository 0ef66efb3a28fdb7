import Foundation

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// An SVG read back with Foundation's XML parser (libxml2), not ours: well-formedness is
/// checked by a parser that did not write it, and elements can be counted by class.
package final class ParsedSVG {
    package struct Element {
        package var name: String
        package var attributes: [String: String]
        package var text = ""
        /// Classes of the element itself.
        package var classes: Set<String> { Set((attributes["class"] ?? "").split(separator: " ").map(String.init)) }
    }

    package let elements: [Element]

    package init(_ text: String) throws {
        let parser = XMLParser(data: Data(text.utf8))
        let collector = Collector()
        parser.delegate = collector
        guard parser.parse() else {
            throw ParseFailure(
                reason: "\(parser.parserError.map { "\($0)" } ?? "unknown") at line \(parser.lineNumber)")
        }
        elements = collector.elements
    }

    package struct ParseFailure: Error, CustomStringConvertible {
        package var reason: String
        package var description: String { "the SVG is not well-formed XML: \(reason)" }
    }

    /// Collects elements, their attributes and text as the parser reports them.
    private final class Collector: NSObject, XMLParserDelegate {
        var elements: [Element] = []
        private var open: [Int] = []

        func parser(
            _ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
            attributes: [String: String] = [:]
        ) {
            open.append(elements.count)
            elements.append(Element(name: name, attributes: attributes))
        }

        func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
            open.removeLast()
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) {
            if let current = open.last { elements[current].text += string }
        }
    }

    /// Elements having every one of the given classes.
    package func all(_ classes: String...) -> [Element] {
        elements.filter { element in classes.allSatisfy { element.classes.contains($0) } }
    }

    package func count(_ classes: String...) -> Int {
        elements.filter { element in classes.allSatisfy { element.classes.contains($0) } }.count
    }

    package var root: Element { elements[0] }
}

extension ParsedSVG.Element {
    /// Where a point-like element sits: its `translate(x y)`, else cx/cy, else x/y.
    package var anchor: (x: Double, y: Double)? {
        if let transform = attributes["transform"],
            let match = transform.firstMatch(of: /translate\(\s*([-\d.]+)[ ,]+([-\d.]+)\s*\)/)
        {
            return (Double(match.1)!, Double(match.2)!)
        }
        if let cx = attributes["cx"].flatMap(Double.init), let cy = attributes["cy"].flatMap(Double.init) {
            return (cx, cy)
        }
        if let x = attributes["x"].flatMap(Double.init), let y = attributes["y"].flatMap(Double.init) { return (x, y) }
        return nil
    }

    /// The absolute points of a path made of M, L and Z commands (what the renderer writes
    /// for shapes and tracks).
    package var pathPoints: [(x: Double, y: Double)] {
        guard let data = attributes["d"] else { return [] }
        var points: [(Double, Double)] = []
        for match in data.matches(of: /[ML]\s*([-\d.]+)[ ,]+([-\d.]+)/) {
            points.append((Double(match.1)!, Double(match.2)!))
        }
        return points
    }
}
