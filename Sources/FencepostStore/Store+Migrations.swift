import GRDB

extension Store {
    /// Named, versioned schema migrations; each runs once, in order, in its own transaction.
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1-regions") { db in
            try db.create(table: "regions") { table in
                table.primaryKey("id", .text)
                table.column("name", .text)
                table.column("kind", .text).notNull()
                table.column("enabled", .boolean).notNull()
                // The canonical GeoJSON Feature: the region's whole content.
                table.column("feature", .text).notNull()
                table.column("content_hash", .text).notNull()
                table.column("geometry_hash", .text).notNull()
                table.column("version", .integer).notNull()
                table.column("min_lon", .double).notNull()
                table.column("min_lat", .double).notNull()
                table.column("max_lon", .double).notNull()
                table.column("max_lat", .double).notNull()
                table.column("created_at", .text).notNull()
                table.column("updated_at", .text).notNull()
            }
        }
        return migrator
    }
}
