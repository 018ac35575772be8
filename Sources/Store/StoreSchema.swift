/// The store's schema, one version after another (docs/event-api.md, "The outbox on disk").
///
/// A new file is made as version 1 and brought up to the current version by the same steps
/// an old file takes, so there is one way to every version. Each step of an old file runs
/// in the one transaction that also stamps `PRAGMA user_version`: a crash or a kill during
/// a migration leaves the file at the version before it or at the one after, never
/// between. A new file takes all of them in one transaction: it is nothing or current.
enum StoreSchema {
    /// The schema this code writes (`PRAGMA user_version`).
    static let version: Int32 = 2

    /// Version 1 (before sinks), exactly as the gateway wrote it: one delivery state per
    /// event, the HTTP server's. `firstSequence` starts the sequence of a new file.
    static func version1(firstSequence: Int64) -> String {
        """
        CREATE TABLE IF NOT EXISTS meta (
            name TEXT PRIMARY KEY,
            int_value INTEGER,
            text_value TEXT
        ) WITHOUT ROWID;
        INSERT OR IGNORE INTO meta (name, int_value) VALUES ('next_sequence', \(firstSequence));
        CREATE TABLE IF NOT EXISTS events (
            sequence INTEGER PRIMARY KEY,
            idempotency_key TEXT NOT NULL UNIQUE,
            type TEXT NOT NULL,
            person_id TEXT NOT NULL,
            body BLOB NOT NULL,
            state INTEGER NOT NULL DEFAULT 0,
            attempts INTEGER NOT NULL DEFAULT 0,
            next_attempt_ms INTEGER NOT NULL,
            last_status INTEGER,
            last_error TEXT,
            created_ms INTEGER NOT NULL,
            updated_ms INTEGER NOT NULL
        );
        CREATE INDEX IF NOT EXISTS events_by_state ON events (state, sequence);
        CREATE TABLE IF NOT EXISTS presence (
            person_id TEXT PRIMARY KEY,
            record BLOB NOT NULL
        ) WITHOUT ROWID;
        """
    }

    /// Version 1 → 2: delivery becomes per sink (docs/event-api.md, "Sinks").
    ///
    /// - `sinks`: every sink the outbox has known, whether the configuration has it now,
    ///   and its last outcomes (version 1 kept the server's in `meta`).
    /// - `deliveries`: one row per event and sink, what `events.state` and its companions
    ///   were for the server alone. Version 1's rows become sink `server`'s, state for
    ///   state: pending, sent, rejected (409), dead letters, and a retry's attempts, time
    ///   and error.
    /// - `events` keeps the event itself and gains `settled_state` / `settled_ms`: set once
    ///   every configured sink has the event (the worst of their final states, the latest
    ///   of their times), which is what retention reads; NULL while a sink has it pending.
    ///   The table is copied once rather than altered column by column (each `DROP COLUMN`
    ///   would rewrite it).
    static let upgrade1to2 = """
        CREATE TABLE sinks (
            name TEXT PRIMARY KEY,
            configured INTEGER NOT NULL,
            changed_ms INTEGER NOT NULL,
            last_success_ms INTEGER,
            last_error_ms INTEGER,
            last_error_class TEXT,
            last_error TEXT
        ) WITHOUT ROWID;
        INSERT INTO sinks (name, configured, changed_ms, last_success_ms, last_error_ms, last_error_class, last_error)
        VALUES ('server', 1, 0,
                (SELECT int_value FROM meta WHERE name = 'last_success_ms'),
                (SELECT int_value FROM meta WHERE name = 'last_error_ms'),
                (SELECT text_value FROM meta WHERE name = 'last_error_class'),
                (SELECT text_value FROM meta WHERE name = 'last_error'));
        DELETE FROM meta WHERE name IN ('last_success_ms', 'last_error_ms', 'last_error_class', 'last_error');
        CREATE TABLE deliveries (
            sink TEXT NOT NULL,
            sequence INTEGER NOT NULL,
            person_id TEXT NOT NULL,
            state INTEGER NOT NULL DEFAULT 0,
            attempts INTEGER NOT NULL DEFAULT 0,
            next_attempt_ms INTEGER NOT NULL,
            last_status INTEGER,
            last_error TEXT,
            updated_ms INTEGER NOT NULL,
            PRIMARY KEY (sink, sequence)
        ) WITHOUT ROWID;
        INSERT INTO deliveries (sink, sequence, person_id, state, attempts, next_attempt_ms, last_status, last_error, updated_ms)
        SELECT 'server', sequence, person_id, state, attempts, next_attempt_ms, last_status, last_error, updated_ms FROM events;
        CREATE TABLE events_v2 (
            sequence INTEGER PRIMARY KEY,
            idempotency_key TEXT NOT NULL UNIQUE,
            type TEXT NOT NULL,
            person_id TEXT NOT NULL,
            body BLOB NOT NULL,
            created_ms INTEGER NOT NULL,
            settled_state INTEGER,
            settled_ms INTEGER
        );
        INSERT INTO events_v2 (sequence, idempotency_key, type, person_id, body, created_ms, settled_state, settled_ms)
        SELECT sequence, idempotency_key, type, person_id, body, created_ms,
               NULLIF(state, 0), CASE WHEN state != 0 THEN updated_ms END
        FROM events;
        DROP TABLE events;
        ALTER TABLE events_v2 RENAME TO events;
        CREATE INDEX deliveries_by_state ON deliveries (sink, state, sequence);
        CREATE INDEX deliveries_pending_by_person ON deliveries (sink, person_id, sequence) WHERE state = 0;
        CREATE INDEX events_settled ON events (settled_state, settled_ms) WHERE settled_state IS NOT NULL;
        """

    /// The steps from each version to the next, in order: `steps[v - 1]` takes version `v`
    /// to `v + 1`.
    static let steps: [String] = [upgrade1to2]
}
