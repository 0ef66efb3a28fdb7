/// PostgreSQL's schema, as named migrations applied once each, in order (``PostgresBackend``
/// records them in `fencepost_migrations`). The tables, columns and indexes are SQLite's (its
/// migrations as they stand: v1 to v9 in one, then each), in PostgreSQL's types, but for
/// `outbox_references`, a hash index here (v19), text in the "C" collation, compared as
/// SQLite compares it (v20), `outbox_regions` in place of `outbox_by_entity` (v21) and
/// `outbox_settled` in place of `outbox_by_status` (v22); the outbox also records each row's
/// transaction (`txid`). No reader uses it now: rows are numbered under a lock held through
/// their commit (``PostgresTransaction/flushOutbox()``), so numbers appear in order.
enum PostgresMigrations {
    struct Migration {
        var name: String
        var sql: String
    }

    static let all: [Migration] = [
        Migration(
            name: "v1-schema",
            sql: """
                CREATE TABLE regions (
                    id TEXT PRIMARY KEY,
                    name TEXT,
                    kind TEXT NOT NULL,
                    enabled BOOLEAN NOT NULL,
                    feature TEXT NOT NULL,
                    content_hash TEXT NOT NULL,
                    geometry_hash TEXT NOT NULL,
                    version INTEGER NOT NULL,
                    min_lon DOUBLE PRECISION NOT NULL,
                    min_lat DOUBLE PRECISION NOT NULL,
                    max_lon DOUBLE PRECISION NOT NULL,
                    max_lat DOUBLE PRECISION NOT NULL,
                    created_at TEXT NOT NULL,
                    updated_at TEXT NOT NULL
                );
                CREATE TABLE events (
                    id TEXT PRIMARY KEY,
                    kind TEXT NOT NULL,
                    source TEXT NOT NULL,
                    device TEXT NOT NULL,
                    region TEXT,
                    visit_id TEXT,
                    time_ms BIGINT NOT NULL,
                    time TEXT NOT NULL,
                    flags TEXT NOT NULL DEFAULT '',
                    properties TEXT NOT NULL DEFAULT '{}',
                    version INTEGER NOT NULL DEFAULT 1,
                    created_at TEXT NOT NULL,
                    lat DOUBLE PRECISION,
                    lon DOUBLE PRECISION
                );
                CREATE INDEX events_by_time ON events (time_ms, id);
                CREATE INDEX events_by_device ON events (device, time_ms);
                CREATE INDEX events_by_region ON events (region, time_ms);
                CREATE TABLE visits (
                    id TEXT PRIMARY KEY,
                    device TEXT NOT NULL,
                    region TEXT NOT NULL,
                    entered_ms BIGINT NOT NULL,
                    entered_at TEXT NOT NULL,
                    exited_ms BIGINT,
                    exited_at TEXT,
                    status TEXT NOT NULL CHECK (status = 'open' OR status = 'closed'),
                    exit_reason TEXT,
                    version INTEGER NOT NULL,
                    updated_at TEXT NOT NULL
                );
                CREATE INDEX visits_by_time ON visits (entered_ms, id);
                CREATE INDEX visits_open_by_region ON visits (region) WHERE status = 'open';
                CREATE TABLE outbox (
                    seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                    entity TEXT NOT NULL,
                    entity_id TEXT NOT NULL,
                    op TEXT NOT NULL CHECK (op = 'upsert' OR op = 'delete'),
                    version INTEGER NOT NULL,
                    idempotency_key TEXT,
                    payload TEXT,
                    status TEXT NOT NULL DEFAULT 'pending'
                        CHECK (status = 'pending' OR status = 'inflight' OR status = 'delivered' OR status = 'dead'),
                    attempts INTEGER NOT NULL DEFAULT 0,
                    next_attempt_at TEXT,
                    last_error TEXT,
                    created_at TEXT NOT NULL,
                    delivered_at TEXT,
                    txid xid8 NOT NULL DEFAULT pg_current_xact_id()
                );
                CREATE INDEX outbox_by_status ON outbox (status, seq);
                CREATE INDEX outbox_by_entity ON outbox (entity, seq);
                CREATE UNIQUE INDEX outbox_by_key ON outbox (idempotency_key) WHERE idempotency_key IS NOT NULL;
                CREATE TABLE devices (
                    device TEXT PRIMARY KEY,
                    anchor_ms BIGINT,
                    state TEXT NOT NULL,
                    updated_at TEXT NOT NULL,
                    version BIGINT NOT NULL DEFAULT 0
                );
                CREATE TABLE health_anchors (
                    owner TEXT NOT NULL,
                    kind TEXT NOT NULL,
                    anchor_ms BIGINT NOT NULL,
                    updated_at TEXT NOT NULL,
                    PRIMARY KEY (owner, kind)
                );
                CREATE TABLE health_sources (
                    owner TEXT NOT NULL,
                    source TEXT NOT NULL,
                    records BIGINT NOT NULL,
                    updated_at TEXT NOT NULL,
                    PRIMARY KEY (owner, source)
                );
                CREATE TABLE tokens (
                    name TEXT PRIMARY KEY,
                    token_hash TEXT NOT NULL UNIQUE,
                    scope TEXT NOT NULL,
                    created_at TEXT NOT NULL
                );
                CREATE TABLE store_meta (
                    key TEXT PRIMARY KEY,
                    value BIGINT NOT NULL
                );
                CREATE TABLE webhook_cursors (
                    webhook TEXT PRIMARY KEY,
                    last_seq BIGINT NOT NULL,
                    updated_at TEXT NOT NULL
                );
                CREATE TABLE webhook_dead_letters (
                    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                    webhook TEXT NOT NULL,
                    outbox_seq BIGINT NOT NULL,
                    event_id TEXT NOT NULL,
                    payload TEXT NOT NULL,
                    attempts INTEGER NOT NULL,
                    last_error TEXT NOT NULL,
                    created_at TEXT NOT NULL,
                    UNIQUE (webhook, outbox_seq)
                );
                CREATE TABLE sync_applied (
                    idempotency_key TEXT PRIMARY KEY,
                    entity TEXT NOT NULL,
                    entity_id TEXT NOT NULL,
                    version INTEGER NOT NULL,
                    applied_at TEXT NOT NULL
                );
                CREATE TABLE sync_state (
                    key TEXT PRIMARY KEY,
                    value TEXT NOT NULL
                );
                CREATE TABLE leases (
                    name TEXT PRIMARY KEY,
                    holder TEXT NOT NULL,
                    expires_ms BIGINT NOT NULL
                );
                """),
        Migration(
            name: "v10-imported-files",
            sql: """
                CREATE TABLE imported_files (
                    sha256 TEXT PRIMARY KEY,
                    name TEXT NOT NULL,
                    kind TEXT NOT NULL CHECK (kind = 'trace' OR kind = 'health'),
                    bytes BIGINT NOT NULL,
                    imported_at TEXT NOT NULL
                );
                """),
        Migration(
            name: "v11-outbox-references-by-entity",
            sql: """
                CREATE INDEX outbox_references ON outbox (entity_id) WHERE payload IS NULL;
                """),
        Migration(
            name: "v12-roster",
            sql: """
                CREATE TABLE roster (
                    device TEXT PRIMARY KEY,
                    name TEXT,
                    groups TEXT NOT NULL,
                    updated_at TEXT NOT NULL
                );
                """),
        Migration(
            name: "v13-device-reported-regions",
            sql: """
                CREATE TABLE device_reported_regions (
                    device TEXT NOT NULL,
                    region TEXT NOT NULL,
                    PRIMARY KEY (device, region)
                );
                CREATE INDEX visits_by_device_region ON visits (device, region);
                """),
        Migration(
            name: "v14-roster-budgets",
            sql: """
                ALTER TABLE roster ADD COLUMN geofence_budget BIGINT;
                ALTER TABLE roster ADD COLUMN platform TEXT;
                CREATE TABLE roster_groups (
                    name TEXT PRIMARY KEY,
                    geofence_budget BIGINT,
                    platform TEXT,
                    updated_at TEXT NOT NULL
                );
                """),
        Migration(
            name: "v15-fix-history",
            sql: """
                CREATE TABLE fix_history (
                    device TEXT NOT NULL,
                    hour_ms BIGINT NOT NULL,
                    chunk BIGINT NOT NULL,
                    first_ms BIGINT NOT NULL,
                    last_ms BIGINT NOT NULL,
                    fix_count BIGINT NOT NULL,
                    fixes BYTEA NOT NULL,
                    PRIMARY KEY (device, hour_ms, chunk)
                );
                CREATE INDEX fix_history_by_hour ON fix_history (hour_ms);
                """),
        Migration(
            name: "v16-stops-trips",
            sql: """
                CREATE TABLE stops (
                    id TEXT PRIMARY KEY NOT NULL,
                    device TEXT NOT NULL,
                    start_ms BIGINT NOT NULL,
                    end_ms BIGINT NOT NULL,
                    lat DOUBLE PRECISION NOT NULL,
                    lon DOUBLE PRECISION NOT NULL,
                    fixes BIGINT NOT NULL,
                    status TEXT NOT NULL CHECK (status IN ('open', 'closed'))
                );
                CREATE INDEX stops_by_device ON stops (device, start_ms);
                CREATE TABLE trips (
                    id TEXT PRIMARY KEY NOT NULL,
                    device TEXT NOT NULL,
                    start_ms BIGINT NOT NULL,
                    end_ms BIGINT NOT NULL,
                    distance DOUBLE PRECISION NOT NULL,
                    max_speed DOUBLE PRECISION NOT NULL,
                    fixes BIGINT NOT NULL,
                    from_stop TEXT,
                    to_stop TEXT,
                    start_lat DOUBLE PRECISION NOT NULL,
                    start_lon DOUBLE PRECISION NOT NULL,
                    end_lat DOUBLE PRECISION NOT NULL,
                    end_lon DOUBLE PRECISION NOT NULL
                );
                CREATE INDEX trips_by_device ON trips (device, start_ms);
                CREATE TABLE movement_state (
                    device TEXT PRIMARY KEY NOT NULL,
                    through_ms BIGINT NOT NULL,
                    state TEXT NOT NULL,
                    updated_at TEXT NOT NULL
                );
                """),
        Migration(
            name: "v17-region-sources",
            sql: "ALTER TABLE regions ADD COLUMN source_hash TEXT"),
        // The region again, its coordinates as doubles and its properties as text
        // (RegionCompactForm): read back without parsing the feature. NULL in rows written
        // before, which are read from their feature until an apply gives them one.
        Migration(
            name: "v18-region-compact-form",
            sql: """
                ALTER TABLE regions ADD COLUMN compact BYTEA;
                -- The rows still without one, which the next apply gives one: found without a scan.
                CREATE INDEX regions_without_compact ON regions (id) WHERE compact IS NULL;
                """),
        // The rows referring to their event, visit or region (`payload` NULL), found by id: only
        // ever looked up by equality (one id or a list of them), so a hash index, whose entries
        // are the ids' hashes. A big ingest's commit adds an entry per outbox row under the
        // numbering lock; a btree entry for a random id costs a descent through the tree and
        // comparisons of text on the way, more than twice a hash entry's cost.
        Migration(
            name: "v19-outbox-references-hashed",
            sql: """
                DROP INDEX outbox_references;
                CREATE INDEX outbox_references ON outbox USING hash (entity_id) WHERE payload IS NULL;
                """),
        // Text compared byte by byte, as SQLite compares it: every text column of the store's
        // tables in the "C" collation, whatever the database's own (often en-US, where "home"
        // sorts before "Office"), so lists and exports come in SQLite's order. The indexes on
        // those columns are rebuilt (one `ALTER TABLE` per table).
        Migration(
            name: "v20-text-in-byte-order",
            sql: """
                DO $$ DECLARE t record; BEGIN FOR t IN SELECT c.table_name, string_agg(format('ALTER COLUMN %I TYPE text COLLATE "C"', c.column_name), ', ') AS changes FROM information_schema.columns c WHERE c.table_schema = current_schema() AND c.data_type = 'text' AND c.collation_name IS DISTINCT FROM 'C' AND c.table_name IN (\(storeTables)) GROUP BY c.table_name LOOP EXECUTE format('ALTER TABLE %I ', t.table_name) || t.changes; END LOOP; END $$
                """),
        // The change feed by entity without an entry per event and visit: a big ingest's commit
        // adds every outbox row under the numbering lock, and `outbox_by_entity` was a quarter
        // of that insert. Readers of events or visits after a cursor walk the primary key from the
        // cursor (live readers are near the end; an event's or visit's row is one in two of an
        // ingest's). Only a region-only pull skips far, past the events to the few regions'
        // rows: a partial index over those, which an ingest does not touch.
        Migration(
            name: "v21-outbox-regions-by-seq",
            sql: """
                CREATE INDEX outbox_regions ON outbox (seq) WHERE entity = 'region';
                DROP INDEX outbox_by_entity;
                """),
        // No index entry for a pending row: the push queue finds its rows from a mark
        // (``OutboxPendingMark``) along the primary key, and `outbox_by_status`, whose entry per
        // row was over a quarter of a big ingest's numbered insert at commit, keeps only the rows past
        // pending (in flight, delivered, dead), which a push, a cleanup and the dead-letter list
        // read by status.
        Migration(
            name: "v22-outbox-settled-by-status",
            sql: """
                CREATE INDEX outbox_settled ON outbox (status, seq) WHERE status IN ('inflight', 'delivered', 'dead');
                DROP INDEX outbox_by_status;
                """),
    ]

    /// The store's tables (as SQL string literals): a database may hold others, which are left alone.
    private static let storeTables = [
        "device_reported_regions", "devices", "events", "fencepost_migrations", "fix_history", "health_anchors",
        "health_sources", "imported_files", "leases", "movement_state", "outbox", "regions", "roster",
        "roster_groups", "stops", "store_meta", "sync_applied", "sync_state", "tokens", "trips", "visits",
        "webhook_cursors", "webhook_dead_letters",
    ].map { "'\($0)'" }.joined(separator: ", ")
}
