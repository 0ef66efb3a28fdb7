package import FencepostCore

/// How to read a trace file beyond what its content says: whose fixes they are, which columns
/// (or properties) hold what, and the zone of times written without one.
///
/// A fleet file holds many devices: each fix is named after its CSV device column, its GeoJSON
/// feature's device property or its OwnTracks record's user/device or `tid`. `device` names
/// every fix of the file instead.
package struct TraceReaderOptions: Sendable {
    /// Names every fix of the file, over any device column or property.
    package var device: String?
    /// The CSV header of each role, matched without regard to case; nil: found by name
    /// (see ``CSVTraceReader``). A named column the header lacks refuses the file.
    package var deviceColumn: String?
    package var timeColumn: String?
    package var latColumn: String?
    package var lonColumn: String?
    package var accuracyColumn: String?
    /// The GeoJSON feature property naming the device; nil: `device`, else `name`, else `tid`.
    package var deviceProperty: String?
    /// Times without a zone or offset (`2020-06-30T00:05:00`) in CSV and GeoJSON files are in
    /// this zone; nil: UTC.
    package var zone: LocalTimeZone?

    package init(
        device: String? = nil, deviceColumn: String? = nil, timeColumn: String? = nil, latColumn: String? = nil,
        lonColumn: String? = nil, accuracyColumn: String? = nil, deviceProperty: String? = nil,
        zone: LocalTimeZone? = nil
    ) {
        self.device = device
        self.deviceColumn = deviceColumn
        self.timeColumn = timeColumn
        self.latColumn = latColumn
        self.lonColumn = lonColumn
        self.accuracyColumn = accuracyColumn
        self.deviceProperty = deviceProperty
        self.zone = zone
    }
}
