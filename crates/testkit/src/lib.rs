//! irqlab's test support, shared by every crate's tests (a dev-dependency only; it depends on
//! nothing of irqlab's, so any crate can use it without a cycle).
//!
//! **The test policy.** A test that needs something the host may lack (/dev/kvm, QEMU, the
//! aarch64 cross toolchain, fio, …) lives in a module named `needs_<resource>` and is
//! `#[ignore = "needs …"]`: `cargo test` lists it as ignored with the reason, and
//! `scripts/test.sh` runs it (`-- --ignored needs_<resource>::`) where the resource is, and
//! lists it as skipped with the reason where it is not. Inside, the test calls
//! [`require`] first: run by hand without the resource it **fails** saying what is missing —
//! never returns early as if it had passed. [`Resource::installed_by_project`] says which
//! resources `scripts/ensure-deps.sh` installs; with `CI` set, test.sh fails when one of those is
//! missing instead of skipping.
//!
//! [`run`] and [`irqlab_fn!`] replace the `irqlab()` helper each test file used to define.
pub mod postgres;
pub mod probe;

pub mod layers;

pub use probe::{postgres_bin, probe, require, Missing, Resource, XEN_SERIES_DEFAULT};

use std::path::Path;
use std::process::{Command, Output};

/// Run `bin` with `args` in `cwd` (the current directory when `None`) and return its output;
/// panics naming the binary when it cannot be started (a test that cannot run its subject
/// must fail).
pub fn run(bin: &str, args: &[&str], cwd: Option<&Path>) -> Output {
    let mut c = Command::new(bin);
    c.args(args);
    if let Some(d) = cwd {
        c.current_dir(d);
    }
    c.output().unwrap_or_else(|e| panic!("cannot run {bin}: {e}"))
}

/// Define the test file's `irqlab(args, cwd)` helper (or `irqlab(args)` with `no_cwd`) on the
/// binary cargo built for this test (`CARGO_BIN_EXE_irqlab`, which only the `cli` crate's tests
/// see, hence a macro expanded there).
#[macro_export]
macro_rules! irqlab_fn {
    () => {
        fn irqlab(args: &[&str], cwd: &std::path::Path) -> std::process::Output {
            $crate::run(env!("CARGO_BIN_EXE_irqlab"), args, Some(cwd))
        }
    };
    (no_cwd) => {
        fn irqlab(args: &[&str]) -> std::process::Output {
            $crate::run(env!("CARGO_BIN_EXE_irqlab"), args, None)
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_returns_the_output_in_the_directory_given() {
        let d = std::env::temp_dir();
        let o = run("pwd", &[], Some(&d));
        assert!(o.status.success());
        let printed = String::from_utf8_lossy(&o.stdout).trim().to_string();
        assert_eq!(std::fs::canonicalize(printed).ok(), std::fs::canonicalize(&d).ok());
    }

    #[test]
    #[should_panic(expected = "cannot run /nonexistent/irqlab")]
    fn a_missing_binary_fails_the_test() {
        run("/nonexistent/irqlab", &[], None);
    }
}
