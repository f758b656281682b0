//! The IPI benchmark kernel module (Yury Norov, "IPI performance benchmark", linux-arm-kernel,
//! Dec 2017), the S2 table's source: kernel log lines such as
//! `[  155.363374] Dry-run:        0,        2999696 ns` — per row the delivery time and the
//! total time in ns, each a sum over the module's NTIMES (100,000) operations. They are totals,
//! not distributions, so they become figures named as irqlab's IPI model names them
//! (`normal_ipi.delivery`, `normal_ipi.total`, …) and `fit` can use them as references. All five
//! rows must be there, once each.
use super::{finite, num, ImportError, ImportOptions, Origin, Parsed};
use results::ConfigResult;

const ROWS: [(&str, &str); 5] =
    [("Dry-run", "dry_run"), ("Self-IPI", "self_ipi"), ("Normal IPI", "normal_ipi"), ("Broadcast IPI", "broadcast_ipi"), ("Broadcast lock", "broadcast_lock")];

pub(super) fn parse(text: &str, file: &str, _opts: &ImportOptions) -> Result<Parsed, ImportError> {
    let mut found: [Option<(usize, f64, f64)>; 5] = [None; 5];
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        // Drop the `[ timestamp ]` prefix of dmesg, if any.
        let l = match line.trim_start().strip_prefix('[') {
            Some(rest) => rest.split_once(']').map(|x| x.1).unwrap_or(rest),
            None => line,
        }
        .trim();
        let Some((k, (label, _))) = ROWS.iter().enumerate().find(|(_, (label, _))| l.starts_with(&format!("{label}:"))) else { continue };
        let rest = l[label.len() + 1..].trim();
        let rest = rest.strip_suffix("ns").ok_or_else(|| ImportError::line(file, n, format!("`{label}: DELIVERY, TOTAL ns`"), l))?;
        let (d, t) = rest.split_once(',').ok_or_else(|| ImportError::line(file, n, format!("`{label}: DELIVERY, TOTAL ns`"), l))?;
        let (d, t): (f64, f64) = (num(file, n, "a delivery time in ns", d)?, num(file, n, "a total time in ns", t)?);
        let (d, t) = (finite(file, &format!("line {n}: {label} delivery"), d, false)?, finite(file, &format!("line {n}: {label} total"), t, false)?);
        if let Some((first, _, _)) = found[k] {
            return Err(ImportError::line(file, n, format!("one `{label}` row per file (one run)"), format!("a second one (the first is on line {first})")));
        }
        found[k] = Some((n, d, t));
    }
    let mut c = ConfigResult::new("ipi_benchmark");
    for ((label, key), f) in ROWS.iter().zip(found) {
        let (_, d, t) = f.ok_or_else(|| ImportError::other(file, format!("no `{label}:` row; expected all of Dry-run, Self-IPI, Normal IPI, Broadcast IPI, Broadcast lock")))?;
        c.set_figure(&format!("{key}.delivery"), d, "ns");
        c.set_figure(&format!("{key}.total"), t, "ns");
    }
    c.notes.push("figures are totals over the module's NTIMES operations (100,000 in the public module)".into());
    Ok(Parsed { origin: Origin { tool: "ipi_benchmark".into(), ..Origin::default() }, configs: vec![c], kind: results::ResultKind::Measured })
}
