//! What the history stores and answers, written once for both databases: `add` (a result for a
//! commit under a label, with its summaries, provenance and gate verdicts), `points` (one
//! statistic per run, oldest first, for `history show` and the trend plot) and `baseline` (the
//! runs of the last N accepted commits, for `compare --against history:LABEL`).
//!
//! A run is keyed by the SHA-256 of its commit, label and result: adding the same result for the
//! same commit again stores nothing and says so ([`Added::AlreadyStored`]); there is no UPDATE or
//! DELETE anywhere in the history. Runs are ordered by `seq`, taken inside the exclusive write
//! transaction, so concurrent writers get distinct, gap-free numbers.
use sha2::{Digest, Sha256};

use crate::backend::Value;
use crate::{History, HistoryError};

/// A result to store.
pub struct NewRun<'a> {
    pub commit: &'a str,
    pub label: &'a str,
    /// Whether this commit was accepted (its gate passed): only accepted runs form a baseline.
    pub accepted: bool,
    /// When it was added, RFC 3339 (the caller's clock, or `SOURCE_DATE_EPOCH`).
    pub added_at: &'a str,
    pub result: &'a results::RunResult,
    /// The compare document's JSON that gated it, or empty.
    pub verdicts: &'a str,
}

/// What `add` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Added {
    Stored {
        run_key: String,
        seq: i64,
        summaries: usize,
    },
    /// The same result for the same commit and label was stored before; nothing was written.
    AlreadyStored {
        run_key: String,
    },
}

/// One run's value of one statistic.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    pub seq: i64,
    pub commit: String,
    pub config: String,
    pub accepted: bool,
    /// Nanoseconds (or a count, for `count`).
    pub value: f64,
}

fn text(s: &str) -> Value {
    Value::Text(s.to_string())
}

/// The run's key: SHA-256 over commit, label and the result's canonical JSON, hex.
pub fn run_key(commit: &str, label: &str, result_json: &str) -> String {
    let mut h = Sha256::new();
    for part in [commit, label, result_json] {
        h.update(part.as_bytes());
        h.update([0u8]);
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

impl History {
    /// Store a run; never replaces one.
    pub fn add(&mut self, r: &NewRun) -> Result<Added, HistoryError> {
        let json = results::to_json_string(r.result);
        let key = run_key(r.commit, r.label, &json);
        let provenance = serde_json::json!({"meta": &r.result.meta, "provenance": &r.result.provenance}).to_string();
        self.write(|h| {
            let seen = h.rows("SELECT seq FROM runs WHERE run_key = $1", &[text(&key)])?;
            if !seen.is_empty() {
                return Ok(Added::AlreadyStored { run_key: key.clone() });
            }
            let next = h.rows("SELECT COALESCE(MAX(seq), 0) + 1 FROM runs", &[])?;
            let seq = next.first().and_then(|r| r[0].int()).unwrap_or(1);
            h.exec(
                "INSERT INTO runs (run_key, commit_id, label, accepted, seq, added_at, provenance, result, verdicts) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
                &[text(&key), text(r.commit), text(r.label), Value::Int(r.accepted.into()), Value::Int(seq), text(r.added_at), text(&provenance), text(&json), text(r.verdicts)],
            )?;
            let mut n = 0;
            for c in r.result.configs.iter().filter(|c| c.error.is_none()) {
                for (class, lc) in &c.classes {
                    for stat in results::COMPARED_STATS {
                        let Some(v) = results::summary_stat(&lc.summary, stat) else { continue };
                        h.exec(
                            "INSERT INTO summaries (run_key, config, class, stat, value) VALUES ($1, $2, $3, $4, $5)",
                            &[text(&key), text(&c.name), text(class), text(stat), Value::Real(v)],
                        )?;
                        n += 1;
                    }
                }
            }
            Ok(Added::Stored { run_key: key.clone(), seq, summaries: n })
        })
    }

    /// The labels stored, sorted.
    pub fn labels(&mut self) -> Result<Vec<String>, HistoryError> {
        self.column("SELECT DISTINCT label FROM runs ORDER BY label", &[])
    }

    fn column(&mut self, sql: &str, p: &[Value]) -> Result<Vec<String>, HistoryError> {
        let rows = self.rows(sql, p)?;
        Ok(rows.into_iter().filter_map(|r| r.into_iter().next().and_then(|v| v.text().map(str::to_string))).collect())
    }

    fn unknown(&self, label: &str, what: &'static str, name: &str, known: &[String]) -> HistoryError {
        let known = if known.is_empty() { "nothing yet".to_string() } else { known.join(", ") };
        HistoryError::Unknown { db: self.db.clone(), label: label.to_string(), what, name: name.to_string(), known }
    }

    /// `stat` of `class` for every run of `label` (optionally one configuration), oldest first.
    /// An unknown label, class, statistic or configuration is an error naming those that exist.
    pub fn points(&mut self, label: &str, class: &str, stat: &str, config: Option<&str>) -> Result<Vec<Point>, HistoryError> {
        let labels = self.labels()?;
        if !labels.iter().any(|l| l == label) {
            return Err(self.unknown(label, "label", label, &labels));
        }
        let by_label = "FROM summaries s JOIN runs r ON r.run_key = s.run_key WHERE r.label = $1";
        let classes = self.column(&format!("SELECT DISTINCT s.class {by_label} ORDER BY s.class"), &[text(label)])?;
        if !classes.iter().any(|c| c == class) {
            return Err(self.unknown(label, "class", class, &classes));
        }
        let stats = self.column(&format!("SELECT DISTINCT s.stat {by_label} AND s.class = $2 ORDER BY s.stat"), &[text(label), text(class)])?;
        if !stats.iter().any(|s| s == stat) {
            return Err(self.unknown(label, "statistic", stat, &stats));
        }
        if let Some(cfg) = config {
            let configs = self.column(&format!("SELECT DISTINCT s.config {by_label} AND s.class = $2 ORDER BY s.config"), &[text(label), text(class)])?;
            if !configs.iter().any(|c| c == cfg) {
                return Err(self.unknown(label, "configuration", cfg, &configs));
            }
        }
        let rows = self.rows(
                &format!("SELECT r.seq, r.commit_id, s.config, r.accepted, s.value {by_label} AND s.class = $2 AND s.stat = $3 AND (s.config = $4 OR CAST($5 AS BIGINT) = 0) ORDER BY r.seq, s.config"),
                &[text(label), text(class), text(stat), text(config.unwrap_or("")), Value::Int(config.is_some().into())],
            )?;
        Ok(rows
            .into_iter()
            .map(|r| Point {
                seq: r[0].int().unwrap_or(0),
                commit: r[1].text().unwrap_or_default().to_string(),
                config: r[2].text().unwrap_or_default().to_string(),
                accepted: r[3].int() == Some(1),
                value: r[4].real().unwrap_or(f64::NAN),
            })
            .collect())
    }

    /// The stored results of the last `commits` accepted commits of `label` (newest commit
    /// first; a commit's runs oldest first), leaving out `exclude` (the commit under test).
    pub fn baseline(&mut self, label: &str, commits: usize, exclude: &str) -> Result<Vec<(String, results::RunResult)>, HistoryError> {
        let labels = self.labels()?;
        if !labels.iter().any(|l| l == label) {
            return Err(self.unknown(label, "label", label, &labels));
        }
        let last = self.column(
            "SELECT commit_id FROM runs WHERE label = $1 AND accepted = 1 AND commit_id <> $2 GROUP BY commit_id ORDER BY MAX(seq) DESC LIMIT $3",
            &[text(label), text(exclude), Value::Int(commits as i64)],
        )?;
        let mut out = Vec::new();
        for commit in last {
            let rows = self.rows("SELECT run_key, result FROM runs WHERE label = $1 AND commit_id = $2 AND accepted = 1 ORDER BY seq", &[text(label), text(&commit)])?;
            for r in rows {
                let key = r[0].text().unwrap_or_default().to_string();
                let res = results::from_json_str(r[1].text().unwrap_or_default(), &format!("{} run {key}", self.db)).map_err(|source| HistoryError::Stored {
                    db: self.db.clone(),
                    run_key: key.clone(),
                    source,
                })?;
                out.push((commit.clone(), res));
            }
        }
        Ok(out)
    }
}
