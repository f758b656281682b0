//! The history on a real PostgreSQL server: the same behaviour as on SQLite (`common`), with
//! several writers at once. Each test starts its own throwaway cluster (`testkit::postgres`:
//! Debian's `initdb`/`pg_ctl` on a free loopback port) and stops it when done.
mod common;

mod needs_postgres {
    use history::{History, HistoryError, Location};

    use super::common;

    fn db(pg: &testkit::postgres::Cluster, name: &str) -> Location {
        Location::Server(pg.database(name))
    }

    #[test]
    #[ignore = "needs PostgreSQL's server (Debian's postgresql): scripts/test.sh runs it where it is installed"]
    fn the_history_on_postgresql() {
        testkit::require(testkit::Resource::Postgres);
        let pg = testkit::postgres::Cluster::start();
        common::adds_and_reads_back(&db(&pg, "adds"));
        common::unknown_names_list_what_exists(&db(&pg, "unknown"));
        common::baseline_takes_the_last_accepted_commits(&db(&pg, "baseline"));
        common::concurrent_writers(&db(&pg, "writers"), 4, 5);
        // a database that holds someone else's tables is refused and left as it was
        let other = db(&pg, "other");
        let Location::Server(url) = &other else { unreachable!() };
        postgres::Client::connect(url, postgres::NoTls).unwrap().batch_execute("CREATE TABLE users (name TEXT)").unwrap();
        let e = History::open(&other).err().unwrap();
        assert!(matches!(e, HistoryError::Foreign { .. }) && e.to_string().contains("users"), "{e}");
        let mut c = postgres::Client::connect(url, postgres::NoTls).unwrap();
        let n: i64 = c.query_one("SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'", &[]).unwrap().get(0);
        assert_eq!(n, 1, "nothing was created beside the foreign table");
        // a newer schema is refused
        let newer = db(&pg, "newer");
        History::open(&newer).unwrap();
        let Location::Server(url) = &newer else { unreachable!() };
        postgres::Client::connect(url, postgres::NoTls).unwrap().batch_execute("UPDATE irqlab_history_meta SET value = '99' WHERE key = 'version'").unwrap();
        assert!(matches!(History::open(&newer).err().unwrap(), HistoryError::Newer { found: 99, .. }));
    }

    #[test]
    #[ignore = "needs PostgreSQL's server (Debian's postgresql): scripts/test.sh runs it where it is installed"]
    fn a_version_1_history_on_postgresql_is_migrated() {
        testkit::require(testkit::Resource::Postgres);
        let pg = testkit::postgres::Cluster::start();
        let loc = db(&pg, "migrate");
        assert_eq!(History::open_at(&loc, 1).unwrap().version().unwrap(), 1);
        let mut h = History::open_at(&loc, 1).unwrap();
        assert_eq!(h.version().unwrap(), 1, "open_at(1) leaves a version-1 history as it is");
        drop(h);
        let Location::Server(url) = &loc else { unreachable!() };
        let mut c = postgres::Client::connect(url, postgres::NoTls).unwrap();
        c.execute(
            "INSERT INTO runs (run_key, commit_id, label, accepted, seq, added_at, provenance, result) VALUES ('k1', 'c1', 'main', 1, 1, 't', '{}', $1)",
            &[&results::to_json_string(&common::result(10_000, 1))],
        )
        .unwrap();
        c.batch_execute("INSERT INTO summaries (run_key, config, class, stat, value) VALUES ('k1', 'x', 'timer', 'p50', 12345.0)").unwrap();
        h = History::open(&loc).unwrap();
        assert_eq!(h.version().unwrap(), history::schema::VERSION);
        assert_eq!(h.points("main", "timer", "p50", None).unwrap()[0].value, 12345.0);
        let v: String = c.query_one("SELECT verdicts FROM runs WHERE run_key = 'k1'", &[]).unwrap().get(0);
        assert_eq!(v, "");
    }
}
