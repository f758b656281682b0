//! The history's schema, versioned: migration N takes a database from version N−1 to N, and
//! `irqlab_history_meta` says whose database it is (`schema = irqlab-history`) and at which
//! version. Opening a database applies the migrations it lacks, inside the exclusive write
//! transaction, so two writers opening a new database at once cannot both create it. A database
//! with other tables and no such row is someone else's; one at a newer version was written by a
//! newer irqlab, and its meaning cannot be guessed: both are refused, named, and left untouched.
//! Migrations only add (tables, columns): nothing stored is ever rewritten.
use crate::backend::{Backend, Value};
use crate::HistoryError;

/// What `irqlab_history_meta`'s `schema` row holds in an irqlab history.
pub const SCHEMA_NAME: &str = "irqlab-history";

/// Each migration's SQL, in both dialects at once; index 0 takes an empty database to version 1.
pub const MIGRATIONS: [&str; 2] = [
    // 1: runs (a result for a commit and label, kept whole) and their summaries.
    "CREATE TABLE irqlab_history_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
     CREATE TABLE runs (
         run_key TEXT PRIMARY KEY,
         commit_id TEXT NOT NULL,
         label TEXT NOT NULL,
         accepted BIGINT NOT NULL,
         seq BIGINT NOT NULL UNIQUE,
         added_at TEXT NOT NULL,
         provenance TEXT NOT NULL,
         result TEXT NOT NULL);
     CREATE TABLE summaries (
         run_key TEXT NOT NULL REFERENCES runs (run_key),
         config TEXT NOT NULL,
         class TEXT NOT NULL,
         stat TEXT NOT NULL,
         value DOUBLE PRECISION NOT NULL,
         PRIMARY KEY (run_key, config, class, stat));
     CREATE INDEX runs_by_label ON runs (label, seq);
     INSERT INTO irqlab_history_meta (key, value) VALUES ('schema', 'irqlab-history'), ('version', '1')",
    // 2: the verdicts of the gate that let the commit in (the compare document's JSON), per run.
    "ALTER TABLE runs ADD COLUMN verdicts TEXT NOT NULL DEFAULT ''",
];

/// The version this irqlab reads and writes.
pub const VERSION: i64 = MIGRATIONS.len() as i64;

/// Bring `db` to [`VERSION`] (or to `upto`, for the migration tests), refusing a foreign or newer
/// database. Runs inside the caller's exclusive transaction.
pub fn migrate(b: &mut dyn Backend, db: &str, upto: i64) -> Result<i64, HistoryError> {
    let err = |source| HistoryError::Backend { db: db.to_string(), source };
    let tables = b.tables().map_err(err)?;
    let from = if tables.iter().any(|t| t == "irqlab_history_meta") {
        let rows = b.rows("SELECT key, value FROM irqlab_history_meta WHERE key IN ('schema', 'version') ORDER BY key", &[]).map_err(err)?;
        let get = |k: &str| rows.iter().find(|r| r[0].text() == Some(k)).and_then(|r| r[1].text().map(str::to_string));
        if get("schema").as_deref() != Some(SCHEMA_NAME) {
            return Err(HistoryError::Foreign { db: db.to_string(), why: format!("its irqlab_history_meta has no `schema = {SCHEMA_NAME}` row") });
        }
        let v = get("version").and_then(|v| v.parse::<i64>().ok());
        match v {
            Some(v) if v > VERSION => return Err(HistoryError::Newer { db: db.to_string(), found: v, supported: VERSION }),
            Some(v) if v >= 1 => v,
            _ => return Err(HistoryError::Foreign { db: db.to_string(), why: "its schema version is not a positive number".into() }),
        }
    } else if !tables.is_empty() {
        return Err(HistoryError::Foreign { db: db.to_string(), why: format!("it holds other tables ({}) and no irqlab_history_meta", tables.join(", ")) });
    } else {
        0
    };
    for v in from + 1..=upto.min(VERSION) {
        b.batch(MIGRATIONS[(v - 1) as usize]).map_err(err)?;
        b.exec("UPDATE irqlab_history_meta SET value = $1 WHERE key = 'version'", &[Value::Text(v.to_string())]).map_err(err)?;
    }
    Ok(upto.min(VERSION).max(from))
}
