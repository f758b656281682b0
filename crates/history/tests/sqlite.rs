//! The history on a SQLite file: the shared behaviour (`common`), the schema's migrations from
//! every older version, and the files it must refuse without touching them.
mod common;

use history::{History, HistoryError, Location};

fn fresh() -> (tempfile::TempDir, Location) {
    let d = tempfile::tempdir().unwrap();
    let loc = Location::File(d.path().join("history.sqlite"));
    (d, loc)
}

#[test]
fn adds_and_reads_back() {
    let (_d, loc) = fresh();
    common::adds_and_reads_back(&loc);
}

#[test]
fn unknown_names_list_what_exists() {
    let (_d, loc) = fresh();
    common::unknown_names_list_what_exists(&loc);
}

#[test]
fn baseline_takes_the_last_accepted_commits() {
    let (_d, loc) = fresh();
    common::baseline_takes_the_last_accepted_commits(&loc);
}

#[test]
fn concurrent_writers_on_one_file() {
    let (_d, loc) = fresh();
    common::concurrent_writers(&loc, 4, 5);
}

#[test]
fn a_version_1_history_is_migrated_and_keeps_its_runs() {
    let (d, loc) = fresh();
    assert_eq!(History::open_at(&loc, 1).unwrap().version().unwrap(), 1);
    // a run as irqlab wrote it at version 1 (no verdicts column yet)
    let r = common::result(10_000, 1);
    let c = rusqlite::Connection::open(d.path().join("history.sqlite")).unwrap();
    c.execute(
        "INSERT INTO runs (run_key, commit_id, label, accepted, seq, added_at, provenance, result) VALUES ('k1', 'c1', 'main', 1, 1, 't', '{}', ?1)",
        [results::to_json_string(&r)],
    )
    .unwrap();
    c.execute("INSERT INTO summaries (run_key, config, class, stat, value) VALUES ('k1', 'x', 'timer', 'p50', 12345.0)", []).unwrap();
    drop(c);
    let mut h = History::open(&loc).unwrap();
    assert_eq!(h.version().unwrap(), history::schema::VERSION);
    assert_eq!(h.points("main", "timer", "p50", None).unwrap()[0].value, 12345.0);
    assert_eq!(h.baseline("main", 1, "").unwrap()[0].1, r);
    // the added column exists, the old run's is empty
    let c = rusqlite::Connection::open(d.path().join("history.sqlite")).unwrap();
    let v: String = c.query_row("SELECT verdicts FROM runs WHERE run_key = 'k1'", [], |r| r.get(0)).unwrap();
    assert_eq!(v, "");
}

/// What a refused file looked like before, so a test can check it was not touched.
fn bytes(p: &std::path::Path) -> Vec<u8> {
    std::fs::read(p).unwrap()
}

#[test]
fn foreign_and_newer_files_are_refused_untouched() {
    let d = tempfile::tempdir().unwrap();
    // not SQLite at all
    let text = d.path().join("notes.txt");
    std::fs::write(&text, "my notes\n").unwrap();
    let e = History::open(&Location::File(text.clone())).err().unwrap();
    assert!(matches!(e, HistoryError::Foreign { .. }) && e.to_string().starts_with(&text.display().to_string()), "{e}");
    assert_eq!(e.exit_code(), 2);
    assert_eq!(bytes(&text), b"my notes\n");
    // SQLite, someone else's
    let other = d.path().join("app.db");
    rusqlite::Connection::open(&other).unwrap().execute_batch("CREATE TABLE users (name TEXT)").unwrap();
    let before = bytes(&other);
    let e = History::open(&Location::File(other.clone())).err().unwrap();
    assert!(e.to_string().contains("users") && e.to_string().contains("app.db"), "{e}");
    assert_eq!(bytes(&other), before);
    // irqlab's, from a newer irqlab
    let newer = d.path().join("newer.sqlite");
    History::open(&Location::File(newer.clone())).unwrap();
    rusqlite::Connection::open(&newer).unwrap().execute_batch("UPDATE irqlab_history_meta SET value = '99' WHERE key = 'version'").unwrap();
    let before = bytes(&newer);
    let e = History::open(&Location::File(newer.clone())).err().unwrap();
    assert!(matches!(e, HistoryError::Newer { found: 99, .. }) && e.to_string().contains("newer.sqlite"), "{e}");
    assert_eq!(e.exit_code(), 2);
    assert_eq!(bytes(&newer), before);
}

/// `--db` naming a FIFO is refused as not a regular file, without blocking on it (opening a FIFO
/// for reading waits for a writer; issue 45's bounded-reads audit).
#[test]
fn a_fifo_is_refused_without_blocking() {
    let d = tempfile::tempdir().unwrap();
    let fifo = d.path().join("history.db");
    assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let (tx, rx) = std::sync::mpsc::channel();
    let f = fifo.clone();
    std::thread::spawn(move || {
        let _ = tx.send(History::open(&Location::File(f)).err().map(|e| (e.exit_code(), e.to_string())));
    });
    let got = rx.recv_timeout(std::time::Duration::from_secs(20)).expect("History::open blocked on a FIFO");
    let (code, msg) = got.expect("a FIFO is refused");
    assert_eq!(code, 2);
    assert!(msg.contains("not a regular file"), "{msg}");
}
