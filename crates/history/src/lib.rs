//! irqlab's results history (issue 46 item 3): each commit's result — its summaries per
//! configuration × class × statistic, its provenance and the result itself, kept whole — stored
//! under a label (a branch, a board) so that `irqlab history show` draws a statistic per commit,
//! and `irqlab compare --against history:LABEL` takes A from the last N accepted commits, whose
//! spread is then the run-to-run variance the verdict needs (a gate against one A cannot see it).
//!
//! One file for a developer or one CI runner (SQLite, `--db FILE`), or one server shared by a
//! team's CI machines (PostgreSQL, `--db postgresql://…`): the same schema (`schema.rs`) and the
//! same statements (`store.rs`) over one small [`Backend`] trait, so nothing of the history's
//! logic is written twice. Writers are serialised by the database (`Backend::begin_exclusive`),
//! so CI jobs may add at once. Nothing is ever updated or deleted: a run already stored is left
//! as it is and reported as such.
pub mod backend;
mod postgres;
pub mod schema;
mod sqlite;
pub mod store;

use std::path::{Path, PathBuf};

pub use backend::{Backend, BackendError, Value};
pub use store::{Added, NewRun, Point};

/// Why the history could not be opened, read or written.
#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    /// Not irqlab's database (exit 2).
    #[error("{db}: not an irqlab results history: {why}")]
    Foreign { db: String, why: String },
    /// Written by a newer irqlab (exit 2).
    #[error("{db}: results history of schema version {found}; this irqlab reads up to version {supported} (use a newer irqlab, or another --db)")]
    Newer { db: String, found: i64, supported: i64 },
    /// A statement failed.
    #[error("{db}")]
    Backend {
        db: String,
        #[source]
        source: BackendError,
    },
    /// The file could not be looked at.
    #[error("{db}")]
    Io {
        db: String,
        #[source]
        source: std::io::Error,
    },
    /// A query named something the history does not have (exit 2).
    #[error("{db}: no {what} `{name}` for label `{label}`; the history has: {known}")]
    Unknown { db: String, label: String, what: &'static str, name: String, known: String },
    /// A stored result that no longer reads (exit 1).
    #[error("{db}: stored run {run_key}")]
    Stored {
        db: String,
        run_key: String,
        #[source]
        source: results::ResultsError,
    },
}

impl HistoryError {
    /// The CLI's exit status: 2 for what the user named wrongly, 1 for a failure.
    pub fn exit_code(&self) -> i32 {
        match self {
            HistoryError::Foreign { .. } | HistoryError::Newer { .. } | HistoryError::Unknown { .. } => 2,
            _ => 1,
        }
    }
}

/// Where a history lives, from `--db`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    File(PathBuf),
    /// A `postgresql://` or `postgres://` URL.
    Server(String),
}

impl Location {
    pub fn parse(db: &str) -> Location {
        if db.starts_with("postgresql://") || db.starts_with("postgres://") {
            Location::Server(db.to_string())
        } else {
            Location::File(PathBuf::from(db))
        }
    }

    /// The name used in messages: the path, or the URL without its password.
    pub fn display(&self) -> String {
        match self {
            Location::File(p) => p.display().to_string(),
            Location::Server(u) => match (u.find("://"), u.rfind('@')) {
                (Some(s), Some(at)) if at > s => {
                    let cred = &u[s + 3..at];
                    let user = cred.split(':').next().unwrap_or("");
                    format!("{}{user}{}", &u[..s + 3], &u[at..])
                }
                _ => u.clone(),
            },
        }
    }
}

/// An open history at the current schema version.
pub struct History {
    pub(crate) db: String,
    pub(crate) b: Box<dyn Backend>,
}

impl History {
    /// Open (creating a new file, or the tables on an empty server schema) and migrate.
    pub fn open(loc: &Location) -> Result<History, HistoryError> {
        Self::open_at(loc, schema::VERSION)
    }

    /// Open and migrate up to `version` only: the migration tests make old databases with it.
    pub fn open_at(loc: &Location, version: i64) -> Result<History, HistoryError> {
        let db = loc.display();
        let b: Box<dyn Backend> = match loc {
            Location::File(p) => {
                check_file(p, &db)?;
                Box::new(sqlite::Sqlite::open(p).map_err(|source| HistoryError::Backend { db: db.clone(), source })?)
            }
            Location::Server(u) => Box::new(postgres::Postgres::connect(u).map_err(|source| HistoryError::Backend { db: db.clone(), source })?),
        };
        let mut h = History { db, b };
        h.write(|h| schema::migrate(h.b.as_mut(), &h.db, version).map(|_| ()))?;
        Ok(h)
    }

    /// The name of the database in messages.
    pub fn name(&self) -> &str {
        &self.db
    }

    /// The schema version stored in the database.
    pub fn version(&mut self) -> Result<i64, HistoryError> {
        let rows = self.rows("SELECT value FROM irqlab_history_meta WHERE key = 'version'", &[])?;
        Ok(rows.first().and_then(|r| r[0].text()).and_then(|v| v.parse().ok()).unwrap_or(0))
    }

    pub(crate) fn err(&self, source: BackendError) -> HistoryError {
        HistoryError::Backend { db: self.db.clone(), source }
    }

    /// A query's rows, its failure naming the database.
    pub(crate) fn rows(&mut self, sql: &str, p: &[Value]) -> Result<Vec<Vec<Value>>, HistoryError> {
        self.b.rows(sql, p).map_err(|e| self.err(e))
    }

    /// A statement, its failure naming the database.
    pub(crate) fn exec(&mut self, sql: &str, p: &[Value]) -> Result<u64, HistoryError> {
        self.b.exec(sql, p).map_err(|e| self.err(e))
    }

    /// Run `f` in the exclusive write transaction; roll back when it fails.
    pub(crate) fn write<T>(&mut self, f: impl FnOnce(&mut Self) -> Result<T, HistoryError>) -> Result<T, HistoryError> {
        self.b.begin_exclusive().map_err(|e| self.err(e))?;
        match f(self) {
            Ok(v) => {
                self.b.commit().map_err(|e| self.err(e))?;
                Ok(v)
            }
            Err(e) => {
                let _ = self.b.rollback();
                Err(e)
            }
        }
    }
}

/// A file that exists must be a SQLite database (its header), or empty (SQLite's own new file).
fn check_file(p: &Path, db: &str) -> Result<(), HistoryError> {
    use std::io::Read;
    // The type first, without opening: opening a FIFO for reading blocks until a writer comes.
    match std::fs::metadata(p) {
        Ok(m) if !m.is_file() => return Err(HistoryError::Foreign { db: db.to_string(), why: "not a regular file".into() }),
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(source) => return Err(HistoryError::Io { db: db.to_string(), source }),
    }
    let mut f = std::fs::File::open(p).map_err(|source| HistoryError::Io { db: db.to_string(), source })?;
    let mut head = Vec::new();
    f.by_ref().take(16).read_to_end(&mut head).map_err(|source| HistoryError::Io { db: db.to_string(), source })?;
    if !head.is_empty() && head.as_slice() != sqlite::HEADER {
        return Err(HistoryError::Foreign { db: db.to_string(), why: "not a SQLite database (its first bytes are not SQLite's header)".into() });
    }
    Ok(())
}
