//! Tests of [`super`] (kept apart so the module stays short).
use super::*;

/// A tiny tree that looks like Xen to the checks (no real build is attempted in unit tests).
fn fake_tree(d: &Path) -> PathBuf {
    let r = d.join("xen-fake");
    std::fs::create_dir_all(r.join("xen/arch/arm")).unwrap();
    std::fs::write(r.join("xen/Kconfig"), "config UNSUPPORTED\n\tbool \"u\"\n").unwrap();
    std::fs::write(r.join("xen/arch/arm/Kconfig"), "config HAS_ITS\n\tbool \"its\"\n").unwrap();
    std::fs::write(r.join("xen/arch/arm/gic.c"), "int a;\n").unwrap();
    r
}

const PATCH_OK: &str = "From 1 Mon Sep 17 00:00:00 2001\nSubject: [PATCH 1/1] arm/gicv4: add\n the option\n\n---\n--- a/xen/arch/arm/Kconfig\n+++ b/xen/arch/arm/Kconfig\n@@ -1,2 +1,4 @@\n config HAS_ITS\n \tbool \"its\"\n+config GICV4\n+\tbool \"v4\"\n";
const PATCH_BAD: &str = "Subject: [PATCH] nope\n---\n--- a/xen/arch/arm/gic.c\n+++ b/xen/arch/arm/gic.c\n@@ -1 +1 @@\n-int b;\n+int c;\n";

#[test]
fn settings_subjects_and_kconfig() {
    assert_eq!(parse_setting("CONFIG_GICV4=y").unwrap(), ("GICV4".into(), "y".into()));
    assert_eq!(parse_setting("SCHED_NULL=n").unwrap(), ("SCHED_NULL".into(), "n".into()));
    for bad in ["GICV4", "=y", "GIC V4=y", "GICV4="] {
        let e = parse_setting(bad).unwrap_err();
        assert_eq!(e.exit_code(), 2);
        assert!(e.to_string().contains("--xen-config"), "{e}");
    }
    assert_eq!(patch_subject(PATCH_OK), "arm/gicv4: add the option");
    assert!(declares("if X\nmenuconfig GICV4\n", "GICV4"));
    assert!(!declares("config GICV4X\n\tdepends on GICV4\n", "GICV4"));
    assert_eq!(config_value("CONFIG_A=y\n# CONFIG_B is not set\n", "A").as_deref(), Some("y"));
    assert_eq!(config_value("CONFIG_A=y\n# CONFIG_B is not set\n", "B"), None);
}

#[test]
fn a_tree_that_is_not_xen_is_refused() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("README"), "linux").unwrap();
    let e = ensure(&XenSource { src: d.path().into(), ..Default::default() }, &d.path().join("cache")).unwrap_err();
    assert_eq!(e.exit_code(), 2);
    assert!(e.to_string().contains("not a Xen tree"), "{e}");
    let e = ensure(&XenSource { src: d.path().join("missing"), ..Default::default() }, &d.path().join("cache")).unwrap_err();
    assert_eq!(e.exit_code(), 2);
}

#[test]
fn patches_are_applied_in_order_and_a_failing_one_is_named() {
    let d = tempfile::tempdir().unwrap();
    let tree = fake_tree(d.path());
    let pd = d.path().join("series");
    std::fs::create_dir(&pd).unwrap();
    std::fs::write(pd.join("0001-ok.patch"), PATCH_OK).unwrap();
    std::fs::write(pd.join("0002-bad.patch"), PATCH_BAD).unwrap();
    let cache = d.path().join("cache");
    let e = ensure(&XenSource { src: tree.clone(), patches: vec![pd.clone()], config: vec![] }, &cache).unwrap_err();
    assert_eq!(e.exit_code(), 2);
    assert!(e.to_string().contains("0002-bad.patch") && !e.to_string().contains("0001"), "{e}");
    assert_eq!(std::fs::read_to_string(tree.join("xen/arch/arm/Kconfig")).unwrap(), "config HAS_ITS\n\tbool \"its\"\n", "the tree itself is never patched");
    let e = ensure(&XenSource { src: tree.clone(), patches: vec![d.path().join("nope.patch")], config: vec![] }, &cache).unwrap_err();
    assert!(e.to_string().contains("nope.patch") && e.exit_code() == 2, "{e}");
    assert!(!cache.join("xen-builds").read_dir().map(|mut r| r.any(|e| e.unwrap().path().join("xen").exists())).unwrap_or(false), "nothing that looks built");
}

#[test]
fn config_symbols_must_exist_in_the_patched_tree() {
    let d = tempfile::tempdir().unwrap();
    let tree = fake_tree(d.path());
    let p = d.path().join("0001-ok.patch");
    std::fs::write(&p, PATCH_OK).unwrap();
    let cache = d.path().join("cache");
    // GICV4 exists only with the patch.
    let e = ensure(&XenSource { src: tree.clone(), patches: vec![], config: vec!["GICV4=y".into()] }, &cache).unwrap_err();
    assert_eq!(e.exit_code(), 2);
    assert!(e.to_string().contains("--xen-config GICV4=y") && e.to_string().contains("no `config GICV4`"), "{e}");
    let e = ensure(&XenSource { src: tree.clone(), patches: vec![p.clone()], config: vec!["HAS_ITS=y".into(), "NO_SUCH=y".into()] }, &cache).unwrap_err();
    assert!(e.to_string().contains("NO_SUCH"), "{e}");
}

#[test]
fn the_key_follows_tree_patches_and_config_and_a_cached_build_is_reused() {
    let d = tempfile::tempdir().unwrap();
    let tree = fake_tree(d.path());
    let p = d.path().join("0001-ok.patch");
    std::fs::write(&p, PATCH_OK).unwrap();
    let src = |patches: Vec<PathBuf>, config: Vec<&str>| XenSource { src: tree.clone(), patches, config: config.into_iter().map(String::from).collect() };
    let k0 = identify(&src(vec![], vec![])).unwrap().0;
    let k1 = identify(&src(vec![p.clone()], vec![])).unwrap().0;
    let k2 = identify(&src(vec![p.clone()], vec!["GICV4=y"])).unwrap().0;
    let k3 = identify(&src(vec![p.clone()], vec!["GICV4=n"])).unwrap().0;
    assert_eq!(k0, identify(&src(vec![], vec![])).unwrap().0, "deterministic");
    assert!(k0 != k1 && k1 != k2 && k2 != k3);
    std::fs::write(tree.join("xen/arch/arm/gic.c"), "int b;\n").unwrap();
    assert_ne!(identify(&src(vec![], vec![])).unwrap().0, k0, "tree content is in the key");
    let (_, _, recs, _) = identify(&src(vec![p.clone()], vec![])).unwrap();
    assert_eq!(recs[0].1.subject, "arm/gicv4: add the option");
    assert_eq!(recs[0].1.sha256.len(), 64);
    // A finished build in the cache is taken as is: no make runs (the fake tree could not build).
    let cache = d.path().join("cache");
    let s = src(vec![p.clone()], vec!["GICV4=y"]);
    let (key, th, recs, _) = identify(&s).unwrap();
    let dir = cache.join("xen-builds").join(&key);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("xen"), "bin").unwrap();
    std::fs::write(dir.join("config"), "CONFIG_GICV4=y\n").unwrap();
    let rec = BuildRecord {
        tree: tree.display().to_string(),
        tree_sha256: th,
        patches: recs.into_iter().map(|r| r.1).collect(),
        config: vec!["CONFIG_GICV4=y".into()],
        key: key.clone(),
        build_s: 1.0,
    };
    std::fs::write(dir.join("build.json"), serde_json::to_vec(&rec).unwrap()).unwrap();
    let b = ensure(&s, &cache).unwrap();
    assert!(b.cached && b.has("GICV4") && !b.has("HAS_ITS"));
    assert!(b.params().iter().any(|(k, v)| k == "xen.patches" && v.contains("arm/gicv4: add the option")));
}

#[test]
fn an_archive_without_xen_is_refused_after_unpacking() {
    let d = tempfile::tempdir().unwrap();
    std::fs::create_dir(d.path().join("t")).unwrap();
    std::fs::write(d.path().join("t/file"), "x").unwrap();
    let tar = d.path().join("t.tar");
    assert!(Command::new("tar").arg("-cf").arg(&tar).arg("-C").arg(d.path()).arg("t").status().unwrap().success());
    let e = ensure(&XenSource { src: tar, ..Default::default() }, &d.path().join("cache")).unwrap_err();
    assert_eq!(e.exit_code(), 2, "{e}");
    assert!(e.to_string().contains("not a Xen tree"), "{e}");
}

/// Applies with GNU patch's default fuzz (its first context line is not the tree's), never exactly.
const PATCH_FUZZY: &str = "Subject: [PATCH] fuzzy\n---\n--- a/xen/arch/arm/Kconfig\n+++ b/xen/arch/arm/Kconfig\n@@ -1,4 +1,5 @@\n config HAS_ITZ\n \tbool \"its\"\n config VGIC\n+\tdefault y\n \tbool \"vgic\"\n";

#[test]
fn a_patch_that_needs_fuzz_is_refused_naming_its_hunk() {
    let d = tempfile::tempdir().unwrap();
    let tree = fake_tree(d.path());
    std::fs::write(tree.join("xen/arch/arm/Kconfig"), "config HAS_ITS\n\tbool \"its\"\nconfig VGIC\n\tbool \"vgic\"\n").unwrap();
    let p = d.path().join("0001-fuzzy.patch");
    std::fs::write(&p, PATCH_FUZZY).unwrap();
    // The premise: GNU patch's default (fuzz 2) takes it, so the old code applied it silently.
    let dry = Command::new("patch").args(["-p1", "--dry-run", "--batch", "-i"]).arg(&p).current_dir(&tree).output().unwrap();
    assert!(dry.status.success() && String::from_utf8_lossy(&dry.stdout).contains("with fuzz 1"), "{}", String::from_utf8_lossy(&dry.stdout));
    let cache = d.path().join("cache");
    let s = XenSource { src: tree.clone(), patches: vec![p.clone()], config: vec![] };
    for e in [check(&s, &cache).unwrap_err(), ensure(&s, &cache).unwrap_err()] {
        assert_eq!(e.exit_code(), 2);
        let t = e.to_string();
        assert!(t.contains("0001-fuzzy.patch") && t.contains("xen/arch/arm/Kconfig: Hunk #1 FAILED at 1") && t.contains("no fuzz allowed"), "{t}");
    }
}

#[test]
fn check_applies_the_series_and_finds_the_symbols_before_any_boot() {
    // Issue 45: `identify` alone let a patch that does not apply, or a symbol no Kconfig declares,
    // through `ab`'s validation, to fail at run 1 with exit 1.
    let d = tempfile::tempdir().unwrap();
    let tree = fake_tree(d.path());
    let (ok, bad) = (d.path().join("0001-ok.patch"), d.path().join("0002-bad.patch"));
    std::fs::write(&ok, PATCH_OK).unwrap();
    std::fs::write(&bad, PATCH_BAD).unwrap();
    let cache = d.path().join("cache");
    let s = |patches: Vec<PathBuf>, config: &[&str]| XenSource { src: tree.clone(), patches, config: config.iter().map(|c| c.to_string()).collect() };
    assert!(identify(&s(vec![ok.clone(), bad.clone()], &[])).is_ok(), "the premise: identify builds nothing and applies nothing");
    let e = check(&s(vec![ok.clone(), bad.clone()], &[]), &cache).unwrap_err();
    assert!(e.exit_code() == 2 && e.to_string().contains("0002-bad.patch does not apply"), "{e}");
    let e = check(&s(vec![ok.clone()], &["GICV5=y"]), &cache).unwrap_err();
    assert!(e.exit_code() == 2 && e.to_string().contains("--xen-config GICV5=y") && e.to_string().contains("no `config GICV5`"), "{e}");
    check(&s(vec![ok.clone()], &["GICV4=y", "HAS_ITS=y"]), &cache).unwrap();
    let left: Vec<_> = std::fs::read_dir(cache.join("xen-builds")).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert!(left.is_empty(), "the scratch copy is removed: {left:?}");
    assert_eq!(std::fs::read_to_string(tree.join("xen/arch/arm/Kconfig")).unwrap(), "config HAS_ITS\n\tbool \"its\"\n", "the tree itself is never patched");
}
