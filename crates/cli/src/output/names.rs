//! Output directory names taken from files (a scenario's `name`, a run matrix's `name`): one
//! function for both, so that neither can write outside `out/` (`../../x`, `/etc`, `.`).
//! Hand-written (a dozen lines) because the rule is irqlab's own: a plain, short, visible name.

/// A file-system-safe directory name: ASCII letters, digits, `-`, `_` and `.` kept, everything
/// else `_`, at most 100 characters, no leading dot (so never `.`, `..` or hidden), never empty.
pub fn safe_dir_name(name: &str) -> String {
    let s: String = name.chars().map(|c| if c.is_ascii_alphanumeric() || "-_.".contains(c) { c } else { '_' }).take(100).collect();
    let s = s.trim_start_matches('.').to_string();
    if s.is_empty() {
        "scenario".into()
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_stay_one_plain_component() {
        for (given, want) in
            [("../../../x", "_.._.._x"), ("/etc/passwd", "_etc_passwd"), ("..", "scenario"), (".", "scenario"), ("", "scenario"), ("a b/c", "a_b_c"), ("ok-1.2_x", "ok-1.2_x")]
        {
            assert_eq!(safe_dir_name(given), want, "{given}");
        }
        let s = safe_dir_name(&"é".repeat(300));
        assert_eq!(s.len(), 100);
        for n in ["../../../x", "/abs", "..", "a/../../b"] {
            let p = std::path::Path::new("out").join(safe_dir_name(n));
            assert_eq!(p.components().count(), 2, "{n}: {}", p.display());
            assert!(p.components().all(|c| matches!(c, std::path::Component::Normal(_))), "{n}");
        }
    }
}
