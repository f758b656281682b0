//! The dom0 fio mode: bad input refused with exit 2 before anything runs (always), and (in
//! `needs_arm_lab`) one lab run per side of the S1 A/B — Xen's base tree with its ITS, and the
//! GICv4 series — booting dom0, running a short fio job on the emulated NVMe and checking how the
//! NVMe's interrupts were delivered: directly with the series, in software without.
use std::process::Command;

fn lab(args: &[&str]) -> (i32, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_irqlab-lab")).args(args).output().unwrap();
    (o.status.code().unwrap_or(-1), String::from_utf8_lossy(&o.stderr).into_owned())
}

#[test]
fn bad_xen_sources_and_fio_words_exit_2_and_write_nothing() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("o");
    let o = out.to_str().unwrap();
    let not_xen = d.path().join("linux");
    std::fs::create_dir(&not_xen).unwrap();
    let (code, err) = lab(&["xen", "--xen-src", not_xen.to_str().unwrap(), "--", "fio", "--job", "4k-qd1", "--out", o]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("not a Xen tree"), "{err}");
    let (code, err) = lab(&["xen", "--patches", "p.patch", "--", "fio", "--job", "4k-qd1", "--out", o]);
    assert_eq!(code, 2, "--patches needs --xen-src: {err}");
    let (code, err) = lab(&["xen", "--", "fio", "--job", "9k-qd7", "--out", o]);
    assert_eq!(code, 2);
    assert!(err.contains("--job"), "{err}");
    let (code, err) = lab(&["xen", "--sched", "null", "--", "fio", "--job", "4k-qd1", "--out", o]);
    assert_eq!(code, 2);
    assert!(err.contains("SCHED_NULL"), "{err}");
    assert!(!out.join("result.json").exists());
}

/// Lab runs: they need QEMU, the cross compiler and the series (`IRQLAB_XEN_GICV4_RFC`, default
/// /work/shared/lab/xen-gicv4-rfc: xen-base.tar.xz and series/): `testkit::Resource::XenSeries`,
/// which fails such a test naming what is missing (it used to return early, as if it had passed). The Xen builds are cached in the
/// lab cache (a cold build is 1–5 min per variant, a cached one seconds).
mod needs_xen_series {
    use std::path::PathBuf;
    use std::sync::Mutex;
    use std::time::Instant;

    static SERIAL: Mutex<()> = Mutex::new(());

    /// The series' directory (testkit's `XenSeries` probe found it before any test here runs).
    fn rfc() -> PathBuf {
        std::env::var_os("IRQLAB_XEN_GICV4_RFC").map(PathBuf::from).unwrap_or_else(|| PathBuf::from(testkit::XEN_SERIES_DEFAULT))
    }

    fn run(name: &str, patches: bool, config: &[&str]) -> results::RunResult {
        let rfc = rfc();
        let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        let d = tempfile::tempdir().unwrap();
        let out = d.path().join("o");
        let tar = rfc.join("xen-base.tar.xz");
        let series = rfc.join("series");
        let mut args: Vec<&str> = vec!["xen", "--xen-src", tar.to_str().unwrap()];
        if patches {
            args.extend(["--patches", series.to_str().unwrap()]);
        }
        args.push("--xen-config");
        args.extend_from_slice(config);
        args.extend(["--", "fio", "--job", "4k-qd1", "--runtime", "2s", "--out", out.to_str().unwrap()]);
        let t = Instant::now();
        let (code, err) = super::lab(&args);
        eprintln!("TIME: {name}: {:.0} s (Xen build {}, boot, 2 s of fio)", t.elapsed().as_secs_f64(), if err.contains("from the cache") { "cached" } else { "cold" });
        assert_eq!(code, 0, "irqlab-lab {args:?}:\n{err}");
        let r = results::read_json(&out.join("result.json")).unwrap();
        assert!(out.join("console-1.log").is_file() && out.join("fio-1.json").is_file());
        r
    }

    fn fig(r: &results::RunResult, k: &str) -> f64 {
        r.configs[0].figures.get(k).unwrap_or_else(|| panic!("no figure {k}")).value
    }

    #[test]
    #[ignore = "needs QEMU, the aarch64 cross toolchain and the Xen GICv4 series: scripts/test.sh runs it where they are"]
    fn dom0_lab_base_tree_with_its_takes_every_nvme_lpi_in_software() {
        testkit::require(testkit::Resource::XenSeries);
        let r = run("base tree, HAS_ITS=y", false, &["UNSUPPORTED=y", "HAS_ITS=y"]);
        let c = &r.configs[0];
        assert!(fig(&r, "iops") > 0.0 && fig(&r, "lab.ios") > 50.0, "fio did I/O");
        assert_eq!(fig(&r, "lab.lpi_direct"), 0.0, "no direct vLPIs without the series");
        assert!(fig(&r, "lab.lpi_xen_software") >= fig(&r, "lab.ios") * 0.9, "every completion went through Xen");
        assert!(fig(&r, "lab.xen_irq_entries_per_io") >= 0.9, "Xen takes an IRQ per I/O");
        assert_eq!(c.params.get("xen.patches").map(String::as_str), Some("none"));
        assert!(c.params["xen.config"].contains("CONFIG_HAS_ITS=y"));
        assert!(c.notes.iter().any(|n| n.contains("emulation wall time")));
    }

    #[test]
    #[ignore = "needs QEMU, the aarch64 cross toolchain and the Xen GICv4 series: scripts/test.sh runs it where they are"]
    fn dom0_lab_series_with_gicv4_delivers_nvme_lpis_directly() {
        testkit::require(testkit::Resource::XenSeries);
        let r = run("series, GICV4=y", true, &["UNSUPPORTED=y", "HAS_ITS=y", "GICV4=y"]);
        let c = &r.configs[0];
        assert!(fig(&r, "lab.lpi_direct") > 0.0, "direct vLPIs with the series");
        assert!(fig(&r, "lab.lpi_direct") >= fig(&r, "lab.ios") * 0.9, "nearly every completion direct");
        assert_eq!(fig(&r, "lab.lpi_xen_software"), 0.0);
        assert!(fig(&r, "lab.xen_irq_entries_per_io") < 0.9, "no Xen IRQ per I/O");
        assert!(c.params["xen.patches"].contains("arm/gicv4: Add GICv4 to the build system"), "the patches are recorded by subject");
        assert!(c.params["xen.config"].contains("CONFIG_GICV4=y"));
    }
}
