//! A throwaway PostgreSQL cluster for the tests of the shared results history: `initdb` in a
//! fresh temporary directory, `pg_ctl start` on a free loopback port (its socket in that
//! directory too), trust authentication for the `postgres` role, and `pg_ctl stop -m immediate`
//! plus the directory's removal on drop. The server refuses to run as root, so as root it runs as
//! the `postgres` user that Debian's package creates (`runuser -u postgres`). Only programs of
//! Debian's `postgresql` package are used, so testkit keeps no dependency.
use std::path::{Path, PathBuf};
use std::process::Command;

/// A running cluster.
pub struct Cluster {
    bin: PathBuf,
    dir: PathBuf,
    port: u16,
}

fn as_root() -> bool {
    Command::new("id").arg("-u").output().map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0").unwrap_or(false)
}

fn server_command(program: &Path) -> Command {
    if as_root() {
        let mut c = Command::new("runuser");
        c.args(["-u", "postgres", "--"]).arg(program);
        c
    } else {
        Command::new(program)
    }
}

fn run(mut c: Command, what: &str) {
    let o = c.output().unwrap_or_else(|e| panic!("{what}: {e}"));
    assert!(o.status.success(), "{what} failed: {}\n{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
}

impl Cluster {
    /// Start one; the caller has already called `require(Resource::Postgres)`.
    pub fn start() -> Cluster {
        let bin = crate::probe::postgres_bin().expect("require(Resource::Postgres) first");
        static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("irqlab-pg-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir(&dir).expect("cluster directory");
        // the server user writes its data and socket there
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).expect("chmod");
        let port = std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).expect("a free port").port();
        let data = dir.join("data");
        let mut c = server_command(&bin.join("initdb"));
        c.args(["-A", "trust", "-U", "postgres", "--no-sync", "-D"]).arg(&data);
        run(c, "initdb");
        let cluster = Cluster { bin, dir, port };
        let mut c = server_command(&cluster.bin.join("pg_ctl"));
        c.args(["-w", "-D"]).arg(&data).arg("-l").arg(cluster.dir.join("server.log"));
        c.arg("-o").arg(format!("-p {port} -c listen_addresses=127.0.0.1 -k {} -c fsync=off", cluster.dir.display()));
        c.arg("start");
        run(c, "pg_ctl start");
        cluster
    }

    /// A new empty database `name` on the cluster, as a `postgresql://` URL.
    pub fn database(&self, name: &str) -> String {
        let mut c = Command::new(self.bin.join("createdb"));
        c.args(["-h", "127.0.0.1", "-p", &self.port.to_string(), "-U", "postgres", name]);
        run(c, "createdb");
        self.url(name)
    }

    /// The URL of database `name`.
    pub fn url(&self, name: &str) -> String {
        format!("postgresql://postgres@127.0.0.1:{}/{name}", self.port)
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let mut c = server_command(&self.bin.join("pg_ctl"));
        c.arg("-D").arg(self.dir.join("data")).args(["-m", "immediate", "stop"]);
        let _ = c.output();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
