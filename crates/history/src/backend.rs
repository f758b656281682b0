//! The one seam between the history's logic and its two databases: a connection that runs SQL
//! text with `$1`-style parameters and gives rows of plain values. SQLite accepts `$N` parameters
//! as PostgreSQL does (<https://www.sqlite.org/lang_expr.html#varparam>), and the schema uses only
//! types both read the same way (`TEXT`, `BIGINT`, `DOUBLE PRECISION`), so every statement of the
//! history is written once (`schema.rs`, `store.rs`); only opening, the table list and the
//! exclusive write transaction differ (`sqlite.rs`, `postgres.rs`).

/// A parameter or a column value. No NULL: the schema has none.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Int(i64),
    Real(f64),
    Text(String),
}

impl Value {
    pub fn text(&self) -> Option<&str> {
        match self {
            Value::Text(s) => Some(s),
            _ => None,
        }
    }

    pub fn int(&self) -> Option<i64> {
        match self {
            Value::Int(i) => Some(*i),
            _ => None,
        }
    }

    pub fn real(&self) -> Option<f64> {
        match self {
            Value::Real(r) => Some(*r),
            Value::Int(i) => Some(*i as f64),
            _ => None,
        }
    }
}

/// Why a statement failed, with the driver's own error as the cause.
#[derive(Debug, thiserror::Error)]
pub enum BackendError {
    #[error("SQLite")]
    Sqlite(#[source] rusqlite::Error),
    #[error("PostgreSQL")]
    Postgres(#[source] postgres::Error),
    /// A column of a type the history never writes (a foreign table read by mistake).
    #[error("column {column} has type {ty}, which the history does not use")]
    ColumnType { column: usize, ty: String },
}

/// A connection to one history database.
pub trait Backend: Send {
    /// Statements without parameters, separated by `;` (the migrations).
    fn batch(&mut self, sql: &str) -> Result<(), BackendError>;
    /// One statement; the number of rows it changed.
    fn exec(&mut self, sql: &str, params: &[Value]) -> Result<u64, BackendError>;
    /// One query's rows.
    fn rows(&mut self, sql: &str, params: &[Value]) -> Result<Vec<Vec<Value>>, BackendError>;
    /// The names of the tables in the database (or the connection's schema).
    fn tables(&mut self) -> Result<Vec<String>, BackendError>;
    /// Begin a transaction that no other writer runs beside: SQLite's `BEGIN IMMEDIATE` (the
    /// file's write lock, waited for), PostgreSQL's transaction-scoped advisory lock. Writers are
    /// serialised, so a migration or an insert never races another.
    fn begin_exclusive(&mut self) -> Result<(), BackendError>;
    fn commit(&mut self) -> Result<(), BackendError>;
    fn rollback(&mut self) -> Result<(), BackendError>;
}
