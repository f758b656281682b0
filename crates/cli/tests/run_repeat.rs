//! `irqlab run --repeat N` on this host's KVM: N fresh VMs per point, in rounds over the points,
//! each run's summary and the pooled distribution kept; `--repeat 0` is refused (without KVM).
//! The runs need /dev/kvm (`needs_kvm`: ignored with the reason, run by scripts/test.sh where it
//! opens).
testkit::irqlab_fn!(no_cwd);

#[test]
fn repeat_0_is_a_usage_error() {
    let o = irqlab(&["run", "timer", "--repeat", "0"]);
    assert_eq!(o.status.code(), Some(2), "--repeat 0 is a usage error");
}

mod needs_kvm {
    use super::*;

    #[test]
    #[ignore = "needs /dev/kvm: scripts/test.sh runs it where /dev/kvm opens"]
    fn repeat_keeps_every_run_and_the_pool() {
        testkit::require(testkit::Resource::Kvm);
        let t = tempfile::tempdir().unwrap();
        let matrix = t.path().join("ab.toml");
        std::fs::write(&matrix, "[run]\nbench = \"timer\"\nsamples = 300\n\n[sweep]\nhalt_poll_ns = [200000, 0]\n").unwrap();
        let out = t.path().join("out");
        let o = irqlab(&["run", "--matrix", matrix.to_str().unwrap(), "--repeat", "3", "--out", out.to_str().unwrap()]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let stdout = String::from_utf8_lossy(&o.stdout);
        assert!(stdout.contains("over 3 --repeat runs per configuration"), "{stdout}");
        let r = results::read_json(&out.join("result.json")).unwrap();
        assert_eq!(r.provenance.as_ref().unwrap().details["repeat"], "3");
        for c in &r.configs {
            let reps = c.repetitions.as_ref().expect("repetitions");
            assert_eq!(reps.len(), 3, "{}", c.name);
            assert!(reps.runs.iter().all(|x| x.seed.is_none()), "measured runs have no seed");
            let counts: Vec<u64> = reps.summaries("timer").iter().map(|s| s.count).collect();
            assert_eq!(counts, vec![300, 300, 300]);
            assert_eq!(reps.pooled["timer"].summary.count, 900);
            assert_eq!(reps.summaries("timer")[0], c.classes["timer"].summary, "the row is the first run");
        }
    }
}
