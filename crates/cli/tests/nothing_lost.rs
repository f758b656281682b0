//! Issue 36, "nothing lost under concurrency" and "repetitions are distinct runs": a second
//! writer of an output directory is refused while the first holds it, real processes racing into
//! one directory never both claim it at once nor leave temporaries, and `import` refuses one run
//! given twice or a prediction pooled with a measurement.
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_irqlab"))
}

testkit::irqlab_fn!();

fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn spawn(args: &[&str], cwd: &Path) -> Child {
    bin().args(args).current_dir(cwd).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap()
}

/// Temporaries left behind: irqlab's dot files other than its locks and its ownership records
/// (the directory's `.irqlab-owned` marker, a file's `.irqlab-owned-HASH` sidecar).
fn leftovers(d: &Path) -> Vec<String> {
    std::fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.starts_with(".irqlab-") && !n.starts_with(".irqlab-lock-") && !n.starts_with(".irqlab-owned"))
        .collect()
}

#[test]
fn a_second_writer_of_an_output_directory_is_refused_while_the_first_holds_it() {
    let d = tempfile::tempdir().unwrap();
    let o = irqlab(&["sim", "demo-timer-inject", "--out", "R", "--format", "json"], d.path());
    assert!(o.status.success(), "{}", err(&o));
    let before = std::fs::read(d.path().join("R/result.json")).unwrap();
    // Another writer holds R (flock(1) on the lock file next to it, as irqlab takes it).
    let lock =
        std::fs::read_dir(d.path()).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).find(|n| n.starts_with(".irqlab-lock-")).expect("the lock file next to R");
    let mut holder = Command::new("flock").args(["-x", &lock, "sleep", "30"]).current_dir(d.path()).spawn().expect("flock(1)");
    std::thread::sleep(std::time::Duration::from_millis(300));
    let o = irqlab(&["sim", "demo-timer-inject", "--seed", "9", "--out", "R", "--format", "json"], d.path());
    holder.kill().unwrap();
    holder.wait().unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", err(&o));
    assert!(err(&o).contains("another irqlab") && err(&o).contains("--out R"), "{}", err(&o));
    assert!(!String::from_utf8_lossy(&o.stdout).contains("wrote"));
    assert_eq!(std::fs::read(d.path().join("R/result.json")).unwrap(), before, "the first writer's result stays");
}

#[test]
fn racing_sims_and_reports_into_one_directory_lose_nothing_and_leave_no_temporaries() {
    let d = tempfile::tempdir().unwrap();
    let o = irqlab(&["sim", "demo-timer-inject", "--out", "R", "--format", "json"], d.path());
    assert!(o.status.success(), "{}", err(&o));
    std::fs::copy(d.path().join("R/result.json"), d.path().join("input.json")).unwrap();
    for round in 0..6 {
        let seed = (round + 10).to_string();
        let kids = [
            spawn(&["sim", "demo-timer-inject", "--seed", &seed, "--seeds", "4", "--out", "R", "--format", "json"], d.path()),
            spawn(&["sim", "demo-timer-inject", "--seed", "99", "--seeds", "4", "--out", "R", "--format", "json"], d.path()),
            spawn(&["report", "input.json", "-o", "R/report.html"], d.path()),
        ];
        for k in kids {
            let o = k.wait_with_output().unwrap();
            let (code, e) = (o.status.code(), err(&o));
            assert!(!e.contains("panicked"), "{e}");
            // Each either did its work, or was refused because the other held the directory.
            assert!(code == Some(0) || (code == Some(2) && e.contains("another irqlab")), "round {round}: {code:?} {e}");
        }
        assert!(leftovers(d.path()).is_empty() && leftovers(&d.path().join("R")).is_empty(), "round {round}: {:?} {:?}", leftovers(d.path()), leftovers(&d.path().join("R")));
        let text = std::fs::read_to_string(d.path().join("R/result.json")).unwrap();
        assert!(text.contains("\"schema_version\""), "a whole result stays in R");
    }
}

#[test]
fn import_refuses_one_run_twice_and_a_prediction_pooled_with_a_measurement() {
    let d = tempfile::tempdir().unwrap();
    let o = irqlab(&["sim", "demo-timer-inject", "--out", "P", "--format", "json"], d.path());
    assert!(o.status.success(), "{}", err(&o));
    std::fs::copy(d.path().join("P/result.json"), d.path().join("copy.json")).unwrap();
    for files in [["P/result.json", "P/result.json"], ["P/result.json", "copy.json"]] {
        let o = irqlab(&["import", "irqlab", files[0], files[1], "--out", "I"], d.path());
        assert_eq!(o.status.code(), Some(2), "{}", err(&o));
        assert!(err(&o).contains(files[1]) && err(&o).contains("same content as") && err(&o).contains(files[0]), "{}", err(&o));
        assert!(!d.path().join("I").exists());
    }
    let text = std::fs::read_to_string(d.path().join("P/result.json")).unwrap();
    let measured = text.replacen("\"kind\": \"predicted\"", "\"kind\": \"measured\"", 1).replacen("\"seed\": 1,", "\"seed\": 2,", 1);
    assert_ne!(measured, text);
    std::fs::write(d.path().join("measured.json"), measured).unwrap();
    let o = irqlab(&["import", "irqlab", "P/result.json", "measured.json", "--out", "I"], d.path());
    assert_eq!(o.status.code(), Some(2), "{}", err(&o));
    assert!(err(&o).contains("measured.json") && err(&o).contains("P/result.json") && err(&o).contains("predicted"), "{}", err(&o));
}
