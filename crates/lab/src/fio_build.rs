//! A static aarch64 `fio` for the lab's dom0, cross-built from Debian's own fio source package.
//!
//! Why: dom0's initramfs has no libc; Debian ships fio only dynamically linked. Debian's source
//! (`apt-get source fio`) configures for a cross compiler with `./configure
//! --cc=aarch64-linux-gnu-gcc --build-static` (fio's own configure script) and builds without any
//! arm64 library (libaio, zlib are then off; the io_uring engine needs none). The source index is
//! fetched with a private apt configuration under the lab cache (a `deb-src` line for this host's
//! Debian suite), so the host's `/etc/apt` is not changed. Nothing of fio is kept in the project:
//! the binary lives in `<lab cache>/fio-static/fio`, with `build.log` beside it.
use std::path::{Path, PathBuf};
use std::process::Command;

/// The module's failures (all environment failures: exit 1).
#[derive(Debug, thiserror::Error)]
pub enum FioBuildError {
    #[error("fio for dom0: step `{step}` failed (log: {})", log.display())]
    Step { step: String, log: PathBuf },
    #[error("fio for dom0: {0}")]
    Env(String),
}

impl From<FioBuildError> for crate::error::LabError {
    fn from(e: FioBuildError) -> Self {
        crate::error::LabError::Part { code: 1, source: Box::new(e) }
    }
}

/// The host's Debian suite (`VERSION_CODENAME` of /etc/os-release).
pub fn suite(os_release: &str) -> Option<String> {
    os_release.lines().find_map(|l| l.strip_prefix("VERSION_CODENAME=")).map(|v| v.trim_matches('"').to_string()).filter(|v| !v.is_empty())
}

/// The private apt options: only our deb-src list, our own lists and caches.
pub fn apt_options(apt: &Path) -> Vec<String> {
    vec![
        format!("-oDir::Etc::SourceList={}", apt.join("sources.list").display()),
        "-oDir::Etc::SourceParts=-".into(),
        format!("-oDir::State::Lists={}", apt.join("lists").display()),
        format!("-oDir::Cache={}", apt.join("cache").display()),
        "-oAPT::Get::List-Cleanup=0".into(),
    ]
}

fn step(cmd: &mut Command, name: &str, log: &Path) -> Result<(), FioBuildError> {
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new().create(true).append(true).open(log).map_err(|e| FioBuildError::Env(format!("{}: {e}", log.display())))?;
    let _ = writeln!(f, "\n== irqlab-lab: {name}");
    let f2 = f.try_clone().map_err(|e| FioBuildError::Env(e.to_string()))?;
    let ok = cmd.stdout(f).stderr(f2).status().map_err(|e| FioBuildError::Env(format!("cannot run `{name}`: {e}")))?.success();
    if ok {
        Ok(())
    } else {
        Err(FioBuildError::Step { step: name.into(), log: log.into() })
    }
}

/// `<cache>/fio-static/fio`, built now when missing (about 3 minutes on two busy cores).
pub fn ensure(cache: &Path) -> Result<PathBuf, FioBuildError> {
    let dir = cache.join("fio-static");
    let bin = dir.join("fio");
    if bin.is_file() {
        return Ok(bin);
    }
    let work = cache.join(format!(".fio-build{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&work);
    let apt = work.join("apt");
    for d in [apt.join("lists/partial"), apt.join("cache/archives/partial"), work.join("src")] {
        std::fs::create_dir_all(&d).map_err(|e| FioBuildError::Env(format!("{}: {e}", d.display())))?;
    }
    let log = cache.join("fio-static.log");
    let _ = std::fs::remove_file(&log);
    let suite = suite(&std::fs::read_to_string("/etc/os-release").unwrap_or_default())
        .ok_or_else(|| FioBuildError::Env("no VERSION_CODENAME in /etc/os-release: cannot tell which Debian suite's fio source to fetch".into()))?;
    std::fs::write(apt.join("sources.list"), format!("deb-src http://deb.debian.org/debian {suite} main\n")).map_err(|e| FioBuildError::Env(e.to_string()))?;
    eprintln!("irqlab-lab: building a static aarch64 fio from Debian's fio source ({suite}; apt-get source with a private deb-src list); log → {}", log.display());
    let opts = apt_options(&apt);
    step(Command::new("apt-get").args(&opts).arg("update"), "apt-get update (deb-src only, private lists)", &log)?;
    step(Command::new("apt-get").args(&opts).args(["source", "--download-only", "fio"]).current_dir(work.join("src")), "apt-get source --download-only fio", &log)?;
    let dsc = std::fs::read_dir(work.join("src"))
        .map_err(|e| FioBuildError::Env(e.to_string()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| p.extension().is_some_and(|e| e == "dsc"))
        .ok_or_else(|| FioBuildError::Env("apt-get source fetched no .dsc".into()))?;
    step(Command::new("dpkg-source").arg("-x").arg(&dsc).arg("fio-src").current_dir(work.join("src")), "dpkg-source -x", &log)?;
    let src = work.join("src/fio-src");
    step(
        Command::new("./configure").args(["--cc=aarch64-linux-gnu-gcc", "--build-static", "--disable-native"]).current_dir(&src),
        "./configure --cc=aarch64-linux-gnu-gcc --build-static",
        &log,
    )?;
    let jobs = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(2).to_string();
    step(Command::new("make").args(["-j", &jobs, "fio"]).current_dir(&src), "make fio", &log)?;
    step(Command::new("aarch64-linux-gnu-strip").arg(src.join("fio")), "aarch64-linux-gnu-strip fio", &log)?;
    let stage = cache.join(format!(".fio-static.stage{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&stage);
    std::fs::create_dir_all(&stage).map_err(|e| FioBuildError::Env(e.to_string()))?;
    std::fs::copy(src.join("fio"), stage.join("fio")).map_err(|e| FioBuildError::Env(format!("copy fio: {e}")))?;
    let _ = std::fs::copy(&log, stage.join("build.log"));
    let _ = std::fs::write(stage.join("SOURCE"), format!("{}\n", dsc.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::rename(&stage, &dir).map_err(|e| FioBuildError::Env(format!("{}: {e}", dir.display())))?;
    let _ = std::fs::remove_dir_all(&work);
    Ok(bin)
}

/// The source package the cached fio was built from (`fio_3.33-3.dsc`), if recorded.
pub fn source_of(cache: &Path) -> Option<String> {
    std::fs::read_to_string(cache.join("fio-static/SOURCE")).ok().map(|s| s.trim().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suite_and_private_apt() {
        assert_eq!(suite("PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\nVERSION_CODENAME=bookworm\n").as_deref(), Some("bookworm"));
        assert_eq!(suite("ID=debian\n"), None);
        let o = apt_options(Path::new("/c/apt"));
        assert!(o.contains(&"-oDir::Etc::SourceParts=-".to_string()), "the host's sources.list.d is not read");
        assert!(o.iter().any(|x| x == "-oDir::State::Lists=/c/apt/lists"), "{o:?}");
    }

    #[test]
    fn a_cached_fio_is_not_rebuilt() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(d.path().join("fio-static")).unwrap();
        std::fs::write(d.path().join("fio-static/fio"), "x").unwrap();
        std::fs::write(d.path().join("fio-static/SOURCE"), "fio_3.33-3.dsc\n").unwrap();
        assert_eq!(ensure(d.path()).unwrap(), d.path().join("fio-static/fio"));
        assert_eq!(source_of(d.path()).as_deref(), Some("fio_3.33-3.dsc"));
    }
}
