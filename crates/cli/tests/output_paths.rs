//! Issue 45's output-path messages: each says what is wrong with which path — a directory where
//! a file goes, a file where a directory goes (`notes.txt/r.html` said only "Not a directory"),
//! a dangling symlink as the output directory (said "exists and is not a directory").
use std::path::Path;
use std::process::Output;

testkit::irqlab_fn!();

fn refused(o: &Output, words: &[&str]) {
    let e = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{e}");
    for w in words {
        assert!(e.contains(w), "message must hold `{w}`: {e}");
    }
}

#[test]
fn each_output_path_message_names_the_path_and_what_is_wrong() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    assert!(irqlab(&["sim", "demo-timer-inject", "--out", "R"], p).status.success());
    std::fs::create_dir(p.join("D")).unwrap();
    std::fs::write(p.join("F"), "notes").unwrap();
    std::os::unix::fs::symlink("missing-dir", p.join("L")).unwrap();
    refused(&irqlab(&["report", "R/result.json", "-o", "D"], p), &["-o D", "is a directory"]);
    refused(&irqlab(&["report", "R/result.json", "-o", "F/x.html"], p), &["-o F/x.html", "F is a file, not a directory"]);
    refused(&irqlab(&["report", "R/result.json", "-o", "L"], p), &["-o L", "symlink", "missing"]);
    refused(&irqlab(&["sim", "demo-timer-inject", "--out", "F/x"], p), &["--out F/x", "F is a file, not a directory"]);
    refused(&irqlab(&["sim", "demo-timer-inject", "--out", "F"], p), &["--out F", "is a regular file", "give another --out"]);
    refused(&irqlab(&["sim", "demo-timer-inject", "--out", "L"], p), &["--out L", "symlink to missing-dir", "does not exist"]);
    assert_eq!(std::fs::read_to_string(p.join("F")).unwrap(), "notes");
    assert!(!p.join("missing-dir").exists());
    // A deep parent that does not exist yet is made.
    assert!(irqlab(&["report", "R/result.json", "-o", "a/b/c/r.html"], p).status.success());
    assert!(Path::new(&p.join("a/b/c/r.html")).is_file());
}
