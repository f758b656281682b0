//! The history in one SQLite file (rusqlite, SQLite built in with the `bundled` feature, so CI
//! needs no system library). Concurrent writers: a busy timeout and `BEGIN IMMEDIATE`, the
//! pattern SQLite documents for several processes writing one file
//! (<https://www.sqlite.org/lang_transaction.html>, <https://www.sqlite.org/c3ref/busy_timeout.html>).
use std::path::Path;
use std::time::Duration;

use rusqlite::types::{Value as SqlValue, ValueRef};

use crate::backend::{Backend, BackendError, Value};

/// How long a writer waits for another's lock before giving up.
const BUSY: Duration = Duration::from_secs(60);

/// The first 16 bytes of every SQLite database file
/// (<https://www.sqlite.org/fileformat.html#the_database_header>).
pub const HEADER: &[u8; 16] = b"SQLite format 3\0";

pub struct Sqlite(rusqlite::Connection);

impl Sqlite {
    pub fn open(path: &Path) -> Result<Sqlite, BackendError> {
        let c = rusqlite::Connection::open(path).map_err(BackendError::Sqlite)?;
        c.busy_timeout(BUSY).map_err(BackendError::Sqlite)?;
        Ok(Sqlite(c))
    }
}

fn params(p: &[Value]) -> Vec<SqlValue> {
    p.iter()
        .map(|v| match v {
            Value::Int(i) => SqlValue::Integer(*i),
            Value::Real(r) => SqlValue::Real(*r),
            Value::Text(s) => SqlValue::Text(s.clone()),
        })
        .collect()
}

impl Backend for Sqlite {
    fn batch(&mut self, sql: &str) -> Result<(), BackendError> {
        self.0.execute_batch(sql).map_err(BackendError::Sqlite)
    }

    fn exec(&mut self, sql: &str, p: &[Value]) -> Result<u64, BackendError> {
        self.0.execute(sql, rusqlite::params_from_iter(params(p))).map(|n| n as u64).map_err(BackendError::Sqlite)
    }

    fn rows(&mut self, sql: &str, p: &[Value]) -> Result<Vec<Vec<Value>>, BackendError> {
        let mut st = self.0.prepare(sql).map_err(BackendError::Sqlite)?;
        let n = st.column_count();
        let mut rows = st.query(rusqlite::params_from_iter(params(p))).map_err(BackendError::Sqlite)?;
        let mut out = Vec::new();
        while let Some(row) = rows.next().map_err(BackendError::Sqlite)? {
            let mut r = Vec::with_capacity(n);
            for i in 0..n {
                r.push(match row.get_ref(i).map_err(BackendError::Sqlite)? {
                    ValueRef::Integer(v) => Value::Int(v),
                    ValueRef::Real(v) => Value::Real(v),
                    ValueRef::Text(t) => Value::Text(String::from_utf8_lossy(t).into_owned()),
                    other => return Err(BackendError::ColumnType { column: i, ty: format!("{:?}", other.data_type()) }),
                });
            }
            out.push(r);
        }
        Ok(out)
    }

    fn tables(&mut self) -> Result<Vec<String>, BackendError> {
        let rows = self.rows("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name", &[])?;
        Ok(rows.into_iter().filter_map(|r| r.into_iter().next().and_then(|v| v.text().map(str::to_string))).collect())
    }

    fn begin_exclusive(&mut self) -> Result<(), BackendError> {
        self.batch("BEGIN IMMEDIATE")
    }

    fn commit(&mut self) -> Result<(), BackendError> {
        self.batch("COMMIT")
    }

    fn rollback(&mut self) -> Result<(), BackendError> {
        self.batch("ROLLBACK")
    }
}
