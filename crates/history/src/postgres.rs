//! The history on a PostgreSQL server, shared by the CI machines of a team (the `postgres`
//! crate's synchronous client, no TLS: a server on the CI network or a socket). Concurrent
//! writers: each write transaction first takes one transaction-scoped advisory lock
//! (`pg_advisory_xact_lock`, <https://www.postgresql.org/docs/15/explicit-locking.html#ADVISORY-LOCKS>),
//! so writers run one after another as SQLite's `BEGIN IMMEDIATE` makes them, and the history's
//! logic needs no second form.
use postgres::types::{ToSql, Type};

use crate::backend::{Backend, BackendError, Value};

/// The advisory lock's key: "irqlab" in ASCII, so no other application's key is likely equal.
const LOCK_KEY: i64 = 0x6972_716c_6162;

pub struct Postgres(postgres::Client);

impl Postgres {
    pub fn connect(url: &str) -> Result<Postgres, BackendError> {
        postgres::Client::connect(url, postgres::NoTls).map(Postgres).map_err(BackendError::Postgres)
    }
}

fn params(p: &[Value]) -> Vec<Box<dyn ToSql + Sync>> {
    p.iter()
        .map(|v| -> Box<dyn ToSql + Sync> {
            match v {
                Value::Int(i) => Box::new(*i),
                Value::Real(r) => Box::new(*r),
                Value::Text(s) => Box::new(s.clone()),
            }
        })
        .collect()
}

impl Backend for Postgres {
    fn batch(&mut self, sql: &str) -> Result<(), BackendError> {
        self.0.batch_execute(sql).map_err(BackendError::Postgres)
    }

    fn exec(&mut self, sql: &str, p: &[Value]) -> Result<u64, BackendError> {
        let owned = params(p);
        let refs: Vec<&(dyn ToSql + Sync)> = owned.iter().map(|b| b.as_ref()).collect();
        self.0.execute(sql, &refs).map_err(BackendError::Postgres)
    }

    fn rows(&mut self, sql: &str, p: &[Value]) -> Result<Vec<Vec<Value>>, BackendError> {
        let owned = params(p);
        let refs: Vec<&(dyn ToSql + Sync)> = owned.iter().map(|b| b.as_ref()).collect();
        let rows = self.0.query(sql, &refs).map_err(BackendError::Postgres)?;
        let mut out = Vec::with_capacity(rows.len());
        for row in rows {
            let mut r = Vec::with_capacity(row.len());
            for (i, col) in row.columns().iter().enumerate() {
                let ty = col.type_();
                r.push(if *ty == Type::INT8 {
                    Value::Int(row.try_get(i).map_err(BackendError::Postgres)?)
                } else if *ty == Type::INT4 {
                    Value::Int(row.try_get::<_, i32>(i).map_err(BackendError::Postgres)?.into())
                } else if *ty == Type::FLOAT8 {
                    Value::Real(row.try_get(i).map_err(BackendError::Postgres)?)
                } else if *ty == Type::TEXT || *ty == Type::VARCHAR || *ty == Type::NAME {
                    Value::Text(row.try_get(i).map_err(BackendError::Postgres)?)
                } else {
                    return Err(BackendError::ColumnType { column: i, ty: ty.name().to_string() });
                });
            }
            out.push(r);
        }
        Ok(out)
    }

    fn tables(&mut self) -> Result<Vec<String>, BackendError> {
        let rows = self.rows("SELECT table_name::text FROM information_schema.tables WHERE table_schema = current_schema() ORDER BY 1", &[])?;
        Ok(rows.into_iter().filter_map(|r| r.into_iter().next().and_then(|v| v.text().map(str::to_string))).collect())
    }

    fn begin_exclusive(&mut self) -> Result<(), BackendError> {
        self.batch("BEGIN")?;
        self.exec("SELECT pg_advisory_xact_lock($1)", &[Value::Int(LOCK_KEY)]).map(|_| ())
    }

    fn commit(&mut self) -> Result<(), BackendError> {
        self.batch("COMMIT")
    }

    fn rollback(&mut self) -> Result<(), BackendError> {
        self.batch("ROLLBACK")
    }
}
