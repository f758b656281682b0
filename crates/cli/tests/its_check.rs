//! `irqlab its-check`: exit 0 clean, 1 with violations (line numbers in the output), 2 on
//! unreadable or malformed input; every shipped example in examples/its ends with the exit
//! status and violation lines its comment header documents.
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn its_check(file: &Path, extra: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_irqlab")).arg("its-check").arg(file).args(extra).output().expect("irqlab runs")
}

fn text(o: &Output) -> (String, String) {
    (String::from_utf8_lossy(&o.stdout).into_owned(), String::from_utf8_lossy(&o.stderr).into_owned())
}

fn examples() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/its");
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|x| x == "its")).collect();
    v.sort();
    v
}

/// The header's "Expected exit status: N" and the line numbers in "(violations at lines a, b)".
fn documented(p: &Path) -> (i32, Vec<usize>) {
    let t = std::fs::read_to_string(p).unwrap();
    let h = t.lines().find(|l| l.contains("Expected exit status:")).unwrap_or_else(|| panic!("{} has no documented exit status", p.display()));
    let code: i32 = h.split("status:").nth(1).unwrap().trim().chars().take_while(|c| c.is_ascii_digit()).collect::<String>().parse().unwrap();
    let lines = match h.split_once("lines ").or_else(|| h.split_once("line ")) {
        Some((_, rest)) => rest.trim_end_matches(").").split(", ").map(|n| n.trim_end_matches(|c: char| !c.is_ascii_digit()).parse().unwrap()).collect(),
        None => vec![],
    };
    (code, lines)
}

#[test]
fn every_example_exits_as_documented_with_the_documented_lines() {
    let ex = examples();
    assert!(ex.len() >= 12, "examples/its holds the Linux sequences and one stream per violation kind");
    for p in ex {
        let (code, lines) = documented(&p);
        let o = its_check(&p, &["--format", "json"]);
        let (out, err) = text(&o);
        assert_eq!(o.status.code(), Some(code), "{}: {out}{err}", p.display());
        if code == 2 {
            assert!(err.contains("line ") && err.contains("expected"), "{}: {err}", p.display());
            continue;
        }
        let j: serde_json::Value = serde_json::from_str(&out).unwrap();
        let mut got: Vec<usize> = j["violations"].as_array().unwrap().iter().map(|v| v["line"].as_u64().unwrap() as usize).collect();
        got.dedup();
        assert_eq!(got, lines, "{}: violation lines", p.display());
    }
}

#[test]
fn clean_stream_exits_0_and_prints_decoded_commands_and_mappings() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("ok.its");
    std::fs::write(&p, "gic v4.1\n0x9 0 0x8000000000000000 0\n0x0000001000000008 0x1 0x8000000040000000 0\n0x000000100000000a 0x0000200500000001 0 0\ntranslate 0x10 1\n").unwrap();
    let o = its_check(&p, &[]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(out.contains("MAPC collection 0 -> redistributor 0"), "{out}");
    assert!(out.contains("MAPTI device 0x10 event 1 -> pINTID 8197, collection 0"), "{out}");
    assert!(out.contains("physical LPI 8197 pending at redistributor 0"), "{out}");
    assert!(out.contains("event 1 -> LPI 8197 (collection 0)") && out.contains("no violations"), "{out}");
}

#[test]
fn violations_exit_1_naming_the_line() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("bad.its");
    std::fs::write(&p, "# INT to an unmapped device\n\n0x0000000700000003 0 0 0\n").unwrap();
    let o = its_check(&p, &[]);
    let (out, _) = text(&o);
    assert_eq!(o.status.code(), Some(1));
    assert!(out.contains("line 3: device 0x7 is not mapped"), "{out}");
}

#[test]
fn malformed_or_unreadable_exit_2_with_line_and_expectation() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("m.its");
    std::fs::write(&p, "gic v4.0\nrd 1 VPENDBASER\n").unwrap();
    let o = its_check(&p, &[]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2));
    assert!(err.contains("m.its: line 2") && err.contains("expected register value"), "{err}");
    let o = its_check(&d.path().join("missing.its"), &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).1.contains("missing.its: cannot read"));
}
