import GRDB

extension SQLiteBackend {
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
        migrator.registerMigration("v2-events-visits-outbox") { db in
            try db.execute(
                sql: """
                    CREATE TABLE events (
                        id TEXT PRIMARY KEY NOT NULL,
                        kind TEXT NOT NULL,
                        source TEXT NOT NULL,
                        device TEXT NOT NULL,
                        region TEXT,
                        visit_id TEXT,
                        time_ms INTEGER NOT NULL,
                        time TEXT NOT NULL,
                        flags TEXT NOT NULL DEFAULT '',
                        properties TEXT NOT NULL DEFAULT '{}',
                        version INTEGER NOT NULL DEFAULT 1,
                        created_at TEXT NOT NULL
                    );
                    CREATE INDEX events_by_time ON events(time_ms, id);
                    CREATE INDEX events_by_device ON events(device, time_ms);
                    CREATE INDEX events_by_region ON events(region, time_ms);

                    CREATE TABLE visits (
                        id TEXT PRIMARY KEY NOT NULL,
                        device TEXT NOT NULL,
                        region TEXT NOT NULL,
                        entered_ms INTEGER NOT NULL,
                        entered_at TEXT NOT NULL,
                        exited_ms INTEGER,
                        exited_at TEXT,
                        status TEXT NOT NULL CHECK (status IN ('open', 'closed')),
                        exit_reason TEXT,
                        version INTEGER NOT NULL,
                        updated_at TEXT NOT NULL
                    );
                    CREATE INDEX visits_by_time ON visits(entered_ms, id);
                    CREATE INDEX visits_open_by_region ON visits(region) WHERE status = 'open';

                    -- Every created or changed event or visit, to be pushed to a backend.
                    CREATE TABLE outbox (
                        seq INTEGER PRIMARY KEY AUTOINCREMENT,
                        entity TEXT NOT NULL,
                        entity_id TEXT NOT NULL,
                        op TEXT NOT NULL CHECK (op IN ('upsert', 'delete')),
                        version INTEGER NOT NULL,
                        idempotency_key TEXT NOT NULL UNIQUE,
                        payload TEXT NOT NULL,
                        status TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'inflight', 'delivered', 'dead')),
                        attempts INTEGER NOT NULL DEFAULT 0,
                        next_attempt_at TEXT,
                        last_error TEXT,
                        created_at TEXT NOT NULL,
                        delivered_at TEXT
                    );
                    CREATE INDEX outbox_by_status ON outbox(status, seq);

                    -- Per device: the last processed fix time (anchor) and the monitor's state.
                    CREATE TABLE devices (
                        device TEXT PRIMARY KEY NOT NULL,
                        anchor_ms INTEGER,
                        state TEXT NOT NULL,
                        updated_at TEXT NOT NULL
                    );
                    """)
        }
        migrator.registerMigration("v3-event-positions") { db in
            // Where each crossing happened, for map exports; null for dwells.
            try db.execute(sql: "ALTER TABLE events ADD COLUMN lat REAL")
            try db.execute(sql: "ALTER TABLE events ADD COLUMN lon REAL")
        }
        migrator.registerMigration("v4-health") { db in
            try db.execute(
                sql: """
                    -- Per owner and health kind: the newest creation time imported (advanced in the
                    -- same transaction as the kind's events).
                    CREATE TABLE health_anchors (
                        owner TEXT NOT NULL,
                        kind TEXT NOT NULL,
                        anchor_ms INTEGER NOT NULL,
                        updated_at TEXT NOT NULL,
                        PRIMARY KEY (owner, kind)
                    );
                    -- The sources of the last import and how many records each had.
                    CREATE TABLE health_sources (
                        owner TEXT NOT NULL,
                        source TEXT NOT NULL,
                        records INTEGER NOT NULL,
                        updated_at TEXT NOT NULL,
                        PRIMARY KEY (owner, source)
                    );
                    """)
        }
        migrator.registerMigration("v5-service") { db in
            try db.execute(
                sql: """
                    -- Bearer tokens of the HTTP service: only a SHA-256 of each is kept.
                    CREATE TABLE tokens (
                        name TEXT PRIMARY KEY NOT NULL,
                        token_hash TEXT NOT NULL UNIQUE,
                        scope TEXT NOT NULL,
                        created_at TEXT NOT NULL
                    );
                    -- Counters other processes watch: regions_revision grows on every region change,
                    -- so a running service knows when to rebuild its monitor.
                    CREATE TABLE store_meta (
                        key TEXT PRIMARY KEY NOT NULL,
                        value INTEGER NOT NULL
                    );
                    -- Per webhook: the last outbox row (seq) delivered or given up on.
                    CREATE TABLE webhook_cursors (
                        webhook TEXT PRIMARY KEY NOT NULL,
                        last_seq INTEGER NOT NULL,
                        updated_at TEXT NOT NULL
                    );
                    -- Events a webhook refused (4xx) or that ran out of attempts.
                    CREATE TABLE webhook_dead_letters (
                        id INTEGER PRIMARY KEY AUTOINCREMENT,
                        webhook TEXT NOT NULL,
                        outbox_seq INTEGER NOT NULL,
                        event_id TEXT NOT NULL,
                        payload TEXT NOT NULL,
                        attempts INTEGER NOT NULL,
                        last_error TEXT NOT NULL,
                        created_at TEXT NOT NULL,
                        UNIQUE (webhook, outbox_seq)
                    );
                    CREATE INDEX outbox_events ON outbox(seq) WHERE entity = 'event';
                    """)
        }
        migrator.registerMigration("v6-sync") { db in
            try db.execute(
                sql: """
                    -- Server side of sync: every mutation applied, by idempotency key, so a repeated
                    -- key answers "duplicate" instead of applying twice.
                    CREATE TABLE sync_applied (
                        idempotency_key TEXT PRIMARY KEY NOT NULL,
                        entity TEXT NOT NULL,
                        entity_id TEXT NOT NULL,
                        version INTEGER NOT NULL,
                        applied_at TEXT NOT NULL
                    );
                    -- Client side: last success and error of push and pull, pull cursors per backend.
                    CREATE TABLE sync_state (
                        key TEXT PRIMARY KEY NOT NULL,
                        value TEXT NOT NULL
                    );
                    -- The change feed by entity (a region-only pull skips the events).
                    CREATE INDEX outbox_by_entity ON outbox(entity, seq);
                    """)
        }
        migrator.registerMigration("v7-outbox-checks") { db in
            try rebuildOutbox(db)
        }
        migrator.registerMigration("v8-outbox-references") { db in
            try rebuildOutboxWithReferences(db)
        }
        migrator.registerMigration("v9-instances") { db in
            try db.execute(
                sql: """
                    -- Grows on every save of a device's state: a process that kept the state since
                    -- it last read or saved it sees whether another one changed it.
                    ALTER TABLE devices ADD COLUMN version INTEGER NOT NULL DEFAULT 0;
                    -- Jobs that must run in one process at a time (a webhook's delivery, the sync
                    -- push, the outbox clean-up): who holds each, until when.
                    CREATE TABLE leases (
                        name TEXT PRIMARY KEY NOT NULL,
                        holder TEXT NOT NULL,
                        expires_ms INTEGER NOT NULL
                    );
                    """)
        }
        migrator.registerMigration("v10-imported-files") { db in
            try db.execute(
                sql: """
                    -- Files imported whole (the watched inbox): each content once, recorded in the
                    -- transaction that commits its events.
                    CREATE TABLE imported_files (
                        sha256 TEXT PRIMARY KEY NOT NULL,
                        name TEXT NOT NULL,
                        kind TEXT NOT NULL CHECK (kind = 'trace' OR kind = 'health'),
                        bytes INTEGER NOT NULL,
                        imported_at TEXT NOT NULL
                    );
                    """)
        }
        migrator.registerMigration("v11-outbox-references-by-entity") { db in
            try db.execute(
                sql: """
                    -- The rows that refer to an entity rather than hold a copy, found by the entity:
                    -- a newer version arriving by sync renders them first. Without it each such
                    -- arrival scanned the outbox, and a backend receiving a push slowed as it grew.
                    CREATE INDEX outbox_references ON outbox(entity_id) WHERE payload IS NULL;
                    """)
        }
        migrator.registerMigration("v12-roster") { db in
            try db.execute(
                sql: """
                    -- The devices people named and grouped (`fencepost devices apply`); `groups`
                    -- is a JSON array of names, sorted.
                    CREATE TABLE roster (
                        device TEXT PRIMARY KEY NOT NULL,
                        name TEXT,
                        groups TEXT NOT NULL,
                        updated_at TEXT NOT NULL
                    );
                    """)
        }
        migrator.registerMigration("v13-device-reported-regions") { db in
            try db.execute(
                sql: """
                    -- The regions each device has reported transitions for: only their visits
                    -- are worked out again by the stay merge when the server's events come.
                    CREATE TABLE device_reported_regions (
                        device TEXT NOT NULL,
                        region TEXT NOT NULL,
                        PRIMARY KEY (device, region)
                    );
                    CREATE INDEX visits_by_device_region ON visits(device, region);
                    """)
        }
        migrator.registerMigration("v14-roster-budgets") { db in
            try db.execute(
                sql: """
                    -- A phone's geofence budget on the roster: a device's own, or its group's.
                    ALTER TABLE roster ADD COLUMN geofence_budget INTEGER;
                    ALTER TABLE roster ADD COLUMN platform TEXT;
                    CREATE TABLE roster_groups (
                        name TEXT PRIMARY KEY NOT NULL,
                        geofence_budget INTEGER,
                        platform TEXT,
                        updated_at TEXT NOT NULL
                    );
                    """)
        }
        migrator.registerMigration("v15-fix-history") { db in
            try db.execute(sql: SQLiteBackend.fixHistorySchema)
        }
        migrator.registerMigration("v16-stops-trips") { db in
            try db.execute(
                sql: """
                    CREATE TABLE stops (
                        id TEXT PRIMARY KEY NOT NULL,
                        device TEXT NOT NULL,
                        start_ms INTEGER NOT NULL,
                        end_ms INTEGER NOT NULL,
                        lat REAL NOT NULL,
                        lon REAL NOT NULL,
                        fixes INTEGER NOT NULL,
                        status TEXT NOT NULL CHECK (status IN ('open', 'closed'))
                    );
                    CREATE INDEX stops_by_device ON stops (device, start_ms);
                    CREATE TABLE trips (
                        id TEXT PRIMARY KEY NOT NULL,
                        device TEXT NOT NULL,
                        start_ms INTEGER NOT NULL,
                        end_ms INTEGER NOT NULL,
                        distance REAL NOT NULL,
                        max_speed REAL NOT NULL,
                        fixes INTEGER NOT NULL,
                        from_stop TEXT,
                        to_stop TEXT,
                        start_lat REAL NOT NULL,
                        start_lon REAL NOT NULL,
                        end_lat REAL NOT NULL,
                        end_lon REAL NOT NULL
                    );
                    CREATE INDEX trips_by_device ON trips (device, start_ms);
                    CREATE TABLE movement_state (
                        device TEXT PRIMARY KEY NOT NULL,
                        through_ms INTEGER NOT NULL,
                        state TEXT NOT NULL,
                        updated_at TEXT NOT NULL
                    );
                    """)
        }
        migrator.registerMigration("v17-region-sources") { db in
            // The fingerprint of the feature text a region was last applied from: a plan
            // recognises unchanged features by it without reading them (RegionSource).
            try db.execute(sql: "ALTER TABLE regions ADD COLUMN source_hash TEXT")
        }
        migrator.registerMigration("v18-region-compact-form") { db in
            // The region again, its coordinates as doubles and its properties as text
            // (RegionCompactForm): read back without parsing the feature. NULL in rows
            // written before, which are read from their feature until an apply gives them one.
            try db.execute(
                sql: """
                    ALTER TABLE regions ADD COLUMN compact BLOB;
                    -- The rows still without one, which the next apply gives one: found without a scan.
                    CREATE INDEX regions_without_compact ON regions (id) WHERE compact IS NULL;
                    """)
        }
        return migrator
    }

    /// The stored fixes (``FixHistory``): per device and hour, chunks of encoded fixes.
    static let fixHistorySchema = """
        CREATE TABLE fix_history (
            device TEXT NOT NULL,
            hour_ms INTEGER NOT NULL,
            chunk INTEGER NOT NULL,
            first_ms INTEGER NOT NULL,
            last_ms INTEGER NOT NULL,
            fix_count INTEGER NOT NULL,
            fixes BLOB NOT NULL,
            PRIMARY KEY (device, hour_ms, chunk)
        );
        -- Retention deletes by hour, whatever the device.
        CREATE INDEX fix_history_by_hour ON fix_history (hour_ms);
        """

    /// The outbox again, with the same columns and rows, and checks SQLite evaluates cheaply:
    /// `status IN (four values)` made SQLite build a temporary index for every row written
    /// (about a third of an outbox insert's cost); the same checks as comparisons cost nothing.
    /// `outbox_events` goes: `outbox_by_entity` serves the same queries.
    private static func rebuildOutbox(_ db: Database) throws {
        try replaceOutbox(
            db, keyAndPayload: "idempotency_key TEXT NOT NULL UNIQUE, payload TEXT NOT NULL", extraIndexes: "")
    }

    /// The outbox again, with the same rows, where a row may refer to its event or visit instead
    /// of carrying a copy of it: `payload` NULL means "the entity at this version, rendered when
    /// read" (``OutboxPayload``), and `idempotency_key` NULL means the default `entity:id:vN`. An
    /// ingest writes such rows (a copy of each event and visit change was a quarter of its
    /// writer's work); rows written before keep their text. Keys stay unique where given.
    private static func rebuildOutboxWithReferences(_ db: Database) throws {
        try replaceOutbox(
            db, keyAndPayload: "idempotency_key TEXT, payload TEXT",
            extraIndexes:
                "CREATE UNIQUE INDEX outbox_by_key ON outbox(idempotency_key) WHERE idempotency_key IS NOT NULL;")
    }

    /// Copies the outbox into a table of the given key and payload columns, with its rows and
    /// AUTOINCREMENT's high-water mark: seq values are never reused, even those of rows cleaned
    /// up since (consumers hold cursors into the outbox).
    private static func replaceOutbox(_ db: Database, keyAndPayload: String, extraIndexes: String) throws {
        let highWater = try Int64.fetchOne(db, sql: "SELECT seq FROM sqlite_sequence WHERE name = 'outbox'")
        let columns = """
            seq, entity, entity_id, op, version, idempotency_key, payload, status, attempts, next_attempt_at,
            last_error, created_at, delivered_at
            """
        try db.execute(
            sql: """
                CREATE TABLE outbox_rebuilt (
                    seq INTEGER PRIMARY KEY AUTOINCREMENT,
                    entity TEXT NOT NULL,
                    entity_id TEXT NOT NULL,
                    op TEXT NOT NULL CHECK (op = 'upsert' OR op = 'delete'),
                    version INTEGER NOT NULL,
                    \(keyAndPayload),
                    status TEXT NOT NULL DEFAULT 'pending'
                        CHECK (status = 'pending' OR status = 'inflight' OR status = 'delivered' OR status = 'dead'),
                    attempts INTEGER NOT NULL DEFAULT 0,
                    next_attempt_at TEXT,
                    last_error TEXT,
                    created_at TEXT NOT NULL,
                    delivered_at TEXT
                );
                INSERT INTO outbox_rebuilt (\(columns)) SELECT \(columns) FROM outbox ORDER BY seq;
                DROP TABLE outbox;
                ALTER TABLE outbox_rebuilt RENAME TO outbox;
                CREATE INDEX outbox_by_status ON outbox(status, seq);
                CREATE INDEX outbox_by_entity ON outbox(entity, seq);
                \(extraIndexes)
                """)
        if let highWater {
            try db.execute(
                sql: "UPDATE sqlite_sequence SET seq = MAX(seq, ?) WHERE name = 'outbox'", arguments: [highWater])
            if db.changesCount == 0 {
                try db.execute(
                    sql: "INSERT INTO sqlite_sequence (name, seq) VALUES ('outbox', ?)", arguments: [highWater])
            }
        }
    }
}
