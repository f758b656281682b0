//! The guest-to-host protocol of every lab mode that boots Linux (`kvm`, the dom0 fio mode): the
//! guest's `/init` prints marker lines (`@irqlab-lab …`, [`MARK`]) on the serial console, and
//! every file it wants back base64-framed between `@irqlab-lab file NAME begin` and `… end`
//! (busybox `base64`, RFC 4648 alphabet). The lab decodes the frames ([`framed_files`]); a name is
//! one plain component, or `I/NAME` for bench I of a boot running several ([`route`]). A leaf:
//! the modes, vfio and the peers' `/init` fragments speak it, it imports nothing but the lab's
//! error. (Apart from `kvm.rs` since issue 44: a protocol constant living in one mode tied four
//! modules into an import cycle.)
use std::path::PathBuf;

use base64::Engine as _;

use crate::error::LabError;

/// Where the guest's `/init` puts its marker lines.
pub const MARK: &str = "@irqlab-lab ";

/// The `irqlab` arguments with `--out DIR` (or `--out=DIR`) taken out: (args for inside, DIR).
pub fn split_out(args: &[String]) -> Result<(Vec<String>, PathBuf), LabError> {
    let mut inner = Vec::new();
    let mut out = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if a == "--out" {
            out = Some(it.next().ok_or_else(|| LabError::Usage("--out: needs a directory".into()))?.clone());
        } else if let Some(v) = a.strip_prefix("--out=") {
            out = Some(v.to_string());
        } else {
            inner.push(a.clone());
        }
    }
    let out = out.ok_or_else(|| LabError::Usage("the irqlab arguments after `--` need `--out DIR` (where result.json comes back to)".into()))?;
    inner.push("--out".into());
    inner.push("/out".into());
    Ok((inner, PathBuf::from(out)))
}

/// A framed file that did not come back whole or safe.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    #[error("`file {0} end` without its begin")]
    EndWithoutBegin(String),
    #[error("`file {name} end` closes `{open}`")]
    WrongEnd { name: String, open: String },
    #[error("{name}: bad base64: {why}")]
    Base64 { name: String, why: String },
    #[error("refusing file name {0:?} (one plain file name is expected)")]
    UnsafeName(String),
    #[error("the console ends inside `{0}` (truncated)")]
    Truncated(String),
}

/// The framed files in a console capture: (name, bytes). A frame without its end is an error.
pub fn framed_files(log: &str) -> Result<Vec<(String, Vec<u8>)>, FrameError> {
    let mut files = Vec::new();
    let mut cur: Option<(String, String)> = None;
    for raw in log.lines() {
        let l = raw.trim_end_matches('\r');
        let Some(i) = l.find(MARK) else {
            if let Some((_, b)) = cur.as_mut() {
                b.push_str(l.trim());
            }
            continue;
        };
        let rest = &l[i + MARK.len()..];
        if let Some(name) = rest.strip_prefix("file ").and_then(|r| r.strip_suffix(" begin")) {
            cur = Some((name.to_string(), String::new()));
        } else if let Some(name) = rest.strip_prefix("file ").and_then(|r| r.strip_suffix(" end")) {
            let (n, b64) = cur.take().ok_or_else(|| FrameError::EndWithoutBegin(name.into()))?;
            if n != name {
                return Err(FrameError::WrongEnd { name: name.into(), open: n });
            }
            let bytes = base64::engine::general_purpose::STANDARD.decode(b64.as_bytes()).map_err(|e| FrameError::Base64 { name: name.into(), why: e.to_string() })?;
            // The name becomes a file under --out: one plain component (after a bench number), nothing else.
            if route(name).is_none() {
                return Err(FrameError::UnsafeName(name.into()));
            }
            files.push((name.to_string(), bytes));
        }
    }
    if let Some((n, _)) = cur {
        return Err(FrameError::Truncated(n));
    }
    Ok(files)
}

/// A framed name: `NAME` (the boot's, or the only bench's) or `I/NAME` (bench I's); `None` when
/// it is neither (the caller refuses it).
pub fn route(name: &str) -> Option<(Option<usize>, &str)> {
    let plain = |n: &str| !(n.is_empty() || n.contains(['/', '\\']) || n.starts_with('.') || n.chars().any(char::is_control));
    match name.split_once('/') {
        None => plain(name).then_some((None, name)),
        Some((i, n)) => (!i.is_empty() && i.bytes().all(|b| b.is_ascii_digit()) && i.len() < 4 && plain(n)).then(|| (i.parse().ok(), n)),
    }
}

/// The bench an `exit …` line speaks for and its status word: `exit 0` → (0, "0"),
/// `exit 3 bench 2` → (2, "3").
pub fn exit_of(line: &str) -> Option<(usize, String)> {
    let rest = line.strip_prefix("exit ")?;
    match rest.split_once(" bench ") {
        Some((code, i)) => Some((i.trim().parse().ok()?, code.to_string())),
        None => Some((0, rest.trim().to_string())),
    }
}

/// The `/init` loop framing every file under /out (and /out/I/) on the console.
pub fn frame_lines() -> String {
    let m = MARK;
    format!("for f in /out/* /out/*/*; do\n  [ -f \"$f\" ] || continue\n  n=${{f#/out/}}\n  echo \"{m}file $n begin\"\n  base64 \"$f\"\n  echo \"{m}file $n end\"\ndone\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn out_is_taken_out_and_replaced() {
        let (inner, out) = split_out(&v("sim demo-timer-inject --out /tmp/o --seed 3")).unwrap();
        assert_eq!(inner, v("sim demo-timer-inject --seed 3 --out /out"));
        assert_eq!(out, PathBuf::from("/tmp/o"));
        assert_eq!(split_out(&v("run timer --out=x")).unwrap().1, PathBuf::from("x"));
        assert!(matches!(split_out(&v("run timer")), Err(LabError::Usage(_))));
        assert!(matches!(split_out(&v("run timer --out")), Err(LabError::Usage(_))));
    }

    #[test]
    fn framed_files_round_trip_and_damage() {
        let b64 = base64::engine::general_purpose::STANDARD.encode(b"{\"a\": 1}\n");
        let log = format!("boot\r\n{MARK}file result.json begin\r\n{}\r\n{}\r\n{MARK}file result.json end\r\n{MARK}done\r\n", &b64[..4], &b64[4..]);
        assert_eq!(framed_files(&log).unwrap(), vec![("result.json".to_string(), b"{\"a\": 1}\n".to_vec())]);
        let cut = format!("{MARK}file result.json begin\n{b64}\n");
        assert!(framed_files(&cut).unwrap_err().to_string().contains("truncated"));
        let bad = format!("{MARK}file result.json begin\n!!!\n{MARK}file result.json end\n");
        assert!(framed_files(&bad).unwrap_err().to_string().contains("base64"));
        let evil = format!("{MARK}file ../x begin\n{b64}\n{MARK}file ../x end\n");
        assert!(framed_files(&evil).unwrap_err().to_string().contains("refusing"));
        let bench = format!("{MARK}file 1/result.json begin\n{b64}\n{MARK}file 1/result.json end\n");
        assert_eq!(framed_files(&bench).unwrap()[0].0, "1/result.json", "bench 1's file of a boot running several");
        // Only one plain component: not empty, no backslash, no control character.
        for name in ["", "a\\b", "a\u{1b}[31m"] {
            let f = format!("{MARK}file {name} begin\n{b64}\n{MARK}file {name} end\n");
            assert!(framed_files(&f).unwrap_err().to_string().contains("refusing"), "{name:?}");
        }
    }

    #[test]
    fn framed_names_route_to_their_bench() {
        assert_eq!(route("result.json"), Some((None, "result.json")));
        assert_eq!(route("2/result.json"), Some((Some(2), "result.json")));
        for bad in ["../x", "a/b", "1/../x", "1/.x", "", "1/", "1/a/b", "12345/x"] {
            assert_eq!(route(bad), None, "{bad}");
        }
        assert_eq!(exit_of("exit 0"), Some((0, "0".into())));
        assert_eq!(exit_of("exit 3 bench 2"), Some((2, "3".into())));
        assert_eq!(exit_of("done"), None);
    }
}
